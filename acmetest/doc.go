// Package acmetest runs simdedge's ACME support end to end against
// pebble, the ACME test server of Let's Encrypt, started in-process on
// loopback. It is a module of its own so that pebble (and the DNS server
// the test answers pebble's look-ups with) never enter simdedge's
// go.mod: users build simdedge with certmagic only.
package acmetest
