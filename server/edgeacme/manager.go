package edgeacme

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"

	"github.com/caddyserver/certmagic"
	"go.uber.org/zap"
)

// Errors.
var (
	ErrNoDomains = errors.New("edgeacme: no domains")
	ErrCA        = errors.New("edgeacme: ca holds no PEM certificate")
	ErrPort      = errors.New("edgeacme: challenge address needs a numeric port")
)

// Options configure one listener's ACME management.
type Options struct {
	// Email is the account's contact (may be empty).
	Email string
	// Directory is the ACME directory URL.
	Directory string
	// Domains are the names managed.
	Domains []string
	// Storage is the directory certmagic keeps its state in.
	Storage string
	// CA is a PEM file of roots for the directory's HTTPS (empty: the
	// system's).
	CA string
	// TLSALPNAddress is the TLS listener's address (host:port, as
	// opened) for TLS-ALPN-01; empty disables that challenge.
	TLSALPNAddress string
	// HTTPAddress is the address of the plain listener that answers
	// HTTP-01 (host:port); empty disables that challenge.
	HTTPAddress string
	// Logger receives certmagic's log (nil: certmagic's default, zap's
	// console format on stderr).
	Logger *slog.Logger
}

// Manager obtains and renews the certificates of one listener's domains.
type Manager struct {
	opts   Options
	cache  *certmagic.Cache
	cfg    *certmagic.Config
	issuer *certmagic.ACMEIssuer
	cancel context.CancelFunc
}

// New prepares a Manager; nothing is fetched before Start.
func New(o Options) (*Manager, error) {
	if len(o.Domains) == 0 {
		return nil, ErrNoDomains
	}
	tmpl := certmagic.ACMEIssuer{
		CA:                      o.Directory,
		Email:                   o.Email,
		Agreed:                  true,
		DisableTLSALPNChallenge: o.TLSALPNAddress == "",
		DisableHTTPChallenge:    o.HTTPAddress == "",
	}
	if o.CA != "" {
		pool, err := loadPool(o.CA)
		if err != nil {
			return nil, err
		}
		tmpl.TrustedRoots = pool
	}
	// certmagic listens on ListenHost and the Alt ports only if nobody
	// does; ours are open there, so it leaves the answers to them.
	if o.TLSALPNAddress != "" {
		host, port, err := splitPort(o.TLSALPNAddress)
		if err != nil {
			return nil, err
		}
		tmpl.ListenHost, tmpl.AltTLSALPNPort = host, port
	}
	if o.HTTPAddress != "" {
		host, port, err := splitPort(o.HTTPAddress)
		if err != nil {
			return nil, err
		}
		if tmpl.ListenHost == "" {
			tmpl.ListenHost = host
		}
		tmpl.AltHTTPPort = port
	}
	var zl *zap.Logger
	if o.Logger != nil {
		zl = zapToSlog(o.Logger)
		tmpl.Logger = zl
	}
	m := &Manager{opts: o}
	m.cache = certmagic.NewCache(certmagic.CacheOptions{
		GetConfigForCert: func(certmagic.Certificate) (*certmagic.Config, error) { return m.cfg, nil },
		Logger:           zl,
	})
	m.cfg = certmagic.New(m.cache, certmagic.Config{Storage: &certmagic.FileStorage{Path: o.Storage}, Logger: zl})
	m.issuer = certmagic.NewACMEIssuer(m.cfg, tmpl)
	m.cfg.Issuers = []certmagic.Issuer{m.issuer}
	return m, nil
}

func splitPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %v", ErrPort, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 {
		return "", 0, ErrPort
	}
	return host, port, nil
}

func loadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("edgeacme: ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%w (%s)", ErrCA, file)
	}
	return pool, nil
}

// Start loads what storage holds and obtains the missing certificates in
// the background (certmagic.ManageAsync), renewing them until Stop. The
// listener keeps serving meanwhile: handshakes for a name not yet
// obtained fail.
func (m *Manager) Start() error {
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	if err := m.cfg.ManageAsync(ctx, m.opts.Domains); err != nil {
		cancel()
		return fmt.Errorf("edgeacme: %w", err)
	}
	return nil
}

// Stop ends obtaining and renewal.
func (m *Manager) Stop() {
	if m.cancel != nil {
		m.cancel()
	}
	m.cache.Stop()
}

// GetCertificate answers a handshake for a managed name, and the
// TLS-ALPN-01 validation handshakes (edgetls.Store.SetManager).
func (m *Manager) GetCertificate(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
	return m.cfg.GetCertificate(h)
}
