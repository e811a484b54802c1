// Package edgeacme obtains and renews a TLS listener's certificates with
// ACME (RFC 8555) through certmagic: TLS-ALPN-01 answered on the TLS
// listener itself (edgetls hands acme-tls/1 handshakes to the Manager),
// HTTP-01 answered on the plain listener that redirects to https (the
// server asks HTTPChallenge). Accounts, keys and certificates persist in a
// directory (certmagic.FileStorage); certmagic renews in the background.
package edgeacme
