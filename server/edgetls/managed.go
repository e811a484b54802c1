package edgetls

import (
	"crypto/tls"
	"errors"
)

// ErrNoCertificate is a handshake's error when no certificate answers: a
// listener with only managed names whose manager is not attached yet or
// has nothing for the name.
var ErrNoCertificate = errors.New("edgetls: no certificate for this name")

// ACMETLS1 is the ALPN protocol of the TLS-ALPN-01 challenge (RFC 8737):
// a validation handshake offers it alone.
const ACMETLS1 = "acme-tls/1"

// GetCertificateFunc answers a handshake with a certificate (a
// certmagic.Config's GetCertificate).
type GetCertificateFunc func(*tls.ClientHelloInfo) (*tls.Certificate, error)

// manager is the certificate source of the managed names.
type manager struct {
	get GetCertificateFunc
	// challengeCfg answers TLS-ALPN-01 validation handshakes: only
	// acme-tls/1 negotiated, the manager's challenge certificate.
	challengeCfg *tls.Config
}

// SetManager attaches the source of the managed names' certificates
// (Options.ManagedNames) and of TLS-ALPN-01 challenge answers. It survives
// Reload; later calls replace it.
func (s *Store) SetManager(get GetCertificateFunc) {
	s.managed.Store(&manager{get: get, challengeCfg: &tls.Config{
		MinVersion:     tls.VersionTLS12,
		NextProtos:     []string{ACMETLS1},
		GetCertificate: get,
	}})
}

// isALPNChallenge reports a TLS-ALPN-01 validation handshake: it offers
// acme-tls/1 and nothing else (RFC 8737 §3), with a name.
func isALPNChallenge(h *tls.ClientHelloInfo) bool {
	return h.ServerName != "" && len(h.SupportedProtos) == 1 && h.SupportedProtos[0] == ACMETLS1
}

// certificate answers a handshake of set: a managed name from the
// manager, else the files' choice (selectCert), else the manager for a
// listener without files.
func (s *Store) certificate(set *certSet, h *tls.ClientHelloInfo) (*tls.Certificate, error) {
	m := s.managed.Load()
	if m != nil && set.managed[normName(h.ServerName)] {
		return m.get(h)
	}
	if c := set.selectCert(h.ServerName); c != nil {
		return c, nil
	}
	if m != nil {
		return m.get(h)
	}
	return nil, ErrNoCertificate
}
