// Package rls is a client of Envoy's rate-limit service protocol
// (envoy.service.ratelimit.v3, the protocol of github.com/envoyproxy/ratelimit
// and of the services Envoy fleets run): a limit that every instance of a
// fleet shares, kept by the service (in Redis, for the reference one).
//
// Per request the route's descriptors, lists of key/value entries whose
// values are templates with the variables of header templates
// (server/rewrite: {client_ip}, {host}, {path}, ...), are expanded and sent
// in one ShouldRateLimit call, bounded by a timeout. OVER_LIMIT refuses the
// request (429, Retry-After from the service's duration_until_reset); an
// error or a timeout follows the failure mode: allow (the default, as
// Envoy's failure_mode_deny: false) or deny (500, Envoy's status_on_error
// default).
//
// The gRPC client and the protocol types are large, so they are built only
// with the build tag fleet (client_fleet.go); without it New fails with
// ErrNeedsFleet and server/config refuses a configuration that names a
// service. Descriptor expansion (descriptor.go) is built either way.
package rls
