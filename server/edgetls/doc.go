// Package edgetls is the TLS policy of simdedge's listeners, written once for
// every engine: which certificate a ClientHello gets (by SNI: the exact name,
// then a one-label wildcard, then the first certificate), which protocol
// versions and cipher suites are offered (TLS 1.3, and TLS 1.2 with ECDHE and
// AEAD suites only), client certificates (mTLS), session tickets whose keys
// rotate, and the handshake timeout.
//
// A Store holds the certificates behind an atomic pointer: Reload loads the
// files again and swaps them in for the next handshakes, without touching
// established connections; when a file is bad the old certificates stay and
// Reload says why. Check validates the files for `simdedge check`.
//
// The engines do the I/O: package server terminates TLS with the *tls.Config
// that Store.TLSConfig returns. This package imports nothing of the project.
package edgetls
