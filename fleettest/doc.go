// Package fleettest drives simdedge binaries built with -tags fleet from
// a control plane made of go-control-plane's own server and snapshot
// cache (the library Istio-like control planes are built on), started
// by the tests on loopback: updates reach every edge, endpoint churn
// under load fails no request, invalid resources are NACKed while the
// last good configuration serves on, and a control-plane restart is
// survived. It is a module of its own so that the control plane's
// packages stay out of the main go.mod (docs/decisions/0001).
package fleettest
