// Package proxyprotodiff fuzzes simdedge's PROXY protocol parser
// (server/proxyproto) against github.com/pires/go-proxyproto: on every
// input both must agree on whether a complete header is there, on its
// length, and on the client address it names, except for the divergences
// written next to the check (where simdedge is stricter, with the line of
// the specification that decides).
package proxyprotodiff
