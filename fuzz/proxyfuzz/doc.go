// Package proxyfuzz fuzzes simdedge's edge proxy end to end: arbitrary
// client bytes go through the server's connection loop and the proxy to a
// strict upstream, which checks that nothing strict parsing rejects is ever
// forwarded.
package proxyfuzz
