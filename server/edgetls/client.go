package edgetls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
)

// The client side: the tls.Config a proxy dials an https upstream with.
// The policy (which roots, which name, which suites) lives here beside the
// listener's, so both sides offer the same versions and suites.

// ClientOptions configure TLS towards one upstream.
type ClientOptions struct {
	// CA is a PEM file of the CAs that sign the upstream's certificates;
	// empty means the system roots.
	CA string
	// ServerName is sent as SNI and verified against the certificate;
	// empty means the target's host (set per target by the proxy).
	ServerName string
	// Cert is the client certificate presented when the upstream asks
	// (mTLS); zero means none.
	Cert CertFiles
	// InsecureSkipVerify accepts any certificate. The program logs a
	// warning whenever a configuration sets it.
	InsecureSkipVerify bool
}

// Errors of ClientConfig.
var (
	ErrUpstreamCA   = errors.New("edgetls: upstream tls ca holds no PEM certificate")
	ErrClientPair   = errors.New("edgetls: upstream tls client_cert needs both cert and key")
	errUpstreamRead = errors.New("edgetls: upstream tls ca unreadable")
)

// ClientConfig loads o's files into a client tls.Config: TLS 1.2 at
// least, the listener's AEAD suites for 1.2, no session cache (the proxy
// sets one per target, see proxy.UpstreamOptions.TLS).
func ClientConfig(o ClientOptions) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:         DefaultMinVersion,
		CipherSuites:       CipherSuites(),
		ServerName:         o.ServerName,
		InsecureSkipVerify: o.InsecureSkipVerify,
	}
	if o.CA != "" {
		b, err := os.ReadFile(o.CA)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errUpstreamRead, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%w (%s)", ErrUpstreamCA, o.CA)
		}
		cfg.RootCAs = pool
	}
	switch {
	case o.Cert.Cert == "" && o.Cert.Key == "":
	case o.Cert.Cert == "" || o.Cert.Key == "":
		return nil, ErrClientPair
	default:
		// loadPair fails when the key does not match the certificate.
		c, err := loadPair(o.Cert)
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	return cfg, nil
}
