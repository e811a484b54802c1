package edgetls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Errors.
var (
	ErrNoCertificates = errors.New("edgetls: no certificates")
	ErrClientCA       = errors.New("edgetls: client_auth ca holds no PEM certificate")
	ErrClientAuthMode = errors.New(`edgetls: client_auth mode must be "require" or "verify_if_given"`)
	ErrVersion        = errors.New("edgetls: min_version must be TLS 1.2 or 1.3")
	// ErrReloadKept wraps the reason a Reload failed; the certificates
	// in use before it stay.
	ErrReloadKept = errors.New("edgetls: reload failed, previous certificates kept")
)

// Store serves the certificates and settings of one TLS listener. The
// current set sits behind an atomic pointer: handshakes read it without a
// lock, and Reload swaps it; connections already established keep the
// session they negotiated. A Store is safe for concurrent use.
type Store struct {
	cur  atomic.Pointer[certSet]
	base *tls.Config
	// quic is the base of QUICConfig: the same sets, ALPN h3.
	quic    *tls.Config
	tickets tickets
	// managed answers for Options.ManagedNames (ACME, managed.go); nil
	// until SetManager.
	managed atomic.Pointer[manager]
}

// certSet is one loaded generation of a Store: immutable once published.
type certSet struct {
	opts  Options
	certs []tls.Certificate
	// names maps a lowercase DNS name (or "*.example.com") to the index
	// of the first certificate that names it.
	names map[string]int
	// managed are the lowercase names the Store's manager answers for
	// (Options.ManagedNames).
	managed map[string]bool
	cfg     *tls.Config
	// quicCfg is cfg for QUIC (QUICConfig): ALPN h3, TLS 1.3.
	quicCfg *tls.Config
}

// New loads o's files. It fails if a file is missing or malformed, a key
// does not match its certificate, or an option is invalid.
func New(o Options) (*Store, error) {
	s := &Store{}
	set, err := load(o, s)
	if err != nil {
		return nil, err
	}
	s.cur.Store(set)
	// The base config is what the listener holds; every handshake is
	// answered with the current set's config (GetConfigForClient), which
	// sets no ticket keys of its own, so crypto/tls uses the base's keys,
	// which rotate (tickets.go).
	s.base = &tls.Config{GetConfigForClient: s.configFor, MinVersion: set.opts.MinVersion}
	s.quic = &tls.Config{GetConfigForClient: s.quicConfigFor, MinVersion: tls.VersionTLS13}
	s.tickets.quic = s.quic
	s.tickets.init(s.base, set.opts.TicketRotation, time.Now())
	return s, nil
}

// Reload loads o's files and, if all is well, serves them to the next
// handshakes. On failure the previous certificates stay in use and the
// error (wrapping ErrReloadKept) says why.
func (s *Store) Reload(o Options) error {
	set, err := load(o, s)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrReloadKept, err)
	}
	s.cur.Store(set)
	return nil
}

// TLSConfig is the configuration to terminate TLS with (tls.Server). It
// stays the same across reloads.
func (s *Store) TLSConfig() *tls.Config { return s.base }

// QUICConfig is TLSConfig for HTTP/3 (server.ServeHTTP3): the same
// certificates, SNI selection, client authentication, managed (ACME)
// names and rotating ticket keys, with ALPN h3 and TLS 1.3 only, as QUIC
// requires (RFC 9001 §4.2). It stays the same across reloads.
func (s *Store) QUICConfig() *tls.Config { return s.quic }

// QUICALPN is HTTP/3's ALPN protocol name (RFC 9114 §3.1).
const QUICALPN = "h3"

func (s *Store) quicConfigFor(*tls.ClientHelloInfo) (*tls.Config, error) {
	set := s.cur.Load()
	s.tickets.rotateIfDue(s.base, set.opts.TicketRotation, time.Now())
	return set.quicCfg, nil
}

// HandshakeTimeout is the current handshake bound.
func (s *Store) HandshakeTimeout() time.Duration { return s.cur.Load().opts.HandshakeTimeout }

// Select returns the certificate for SNI name (see certSet.selectCert).
func (s *Store) Select(name string) *tls.Certificate { return s.cur.Load().selectCert(name) }

func (s *Store) configFor(h *tls.ClientHelloInfo) (*tls.Config, error) {
	set := s.cur.Load()
	s.tickets.rotateIfDue(s.base, set.opts.TicketRotation, time.Now())
	if m := s.managed.Load(); m != nil && isALPNChallenge(h) {
		return m.challengeCfg, nil
	}
	return set.cfg, nil
}

// selectCert picks the certificate for SNI name: the one that names it
// exactly, else the one with a wildcard for its parent (one label only,
// as RFC 6125 §6.4.3 allows), else the default (the first; nil when the
// listener has only managed names). Names compare case-insensitively,
// without a trailing dot.
func (c *certSet) selectCert(name string) *tls.Certificate {
	name = normName(name)
	if name != "" {
		if i, ok := c.names[name]; ok {
			return &c.certs[i]
		}
		if dot := strings.IndexByte(name, '.'); dot > 0 {
			if i, ok := c.names["*"+name[dot:]]; ok {
				return &c.certs[i]
			}
		}
	}
	if len(c.certs) == 0 {
		return nil
	}
	return &c.certs[0]
}

func normName(name string) string { return strings.ToLower(strings.TrimSuffix(name, ".")) }

// load reads o's files into a set whose handshakes s answers (s.certificate).
func load(o Options, s *Store) (*certSet, error) {
	o = o.WithDefaults()
	if len(o.Certificates) == 0 && len(o.ManagedNames) == 0 {
		return nil, ErrNoCertificates
	}
	if o.MinVersion != tls.VersionTLS12 && o.MinVersion != tls.VersionTLS13 {
		return nil, ErrVersion
	}
	set := &certSet{opts: o, names: map[string]int{}, managed: map[string]bool{}}
	for _, n := range o.ManagedNames {
		set.managed[normName(n)] = true
	}
	for i, f := range o.Certificates {
		c, err := loadPair(f)
		if err != nil {
			return nil, fmt.Errorf("edgetls: certificates[%d]: %w", i, err)
		}
		set.certs = append(set.certs, c)
		for _, n := range certNames(c.Leaf) {
			if _, dup := set.names[n]; !dup {
				set.names[n] = i
			}
		}
	}
	cfg := &tls.Config{
		MinVersion:   o.MinVersion,
		MaxVersion:   tls.VersionTLS13,
		CipherSuites: cipherSuites,
		NextProtos:   o.ALPN,
		GetCertificate: func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
			return s.certificate(set, h)
		},
	}
	if o.ClientCA != "" {
		pool, err := loadPool(o.ClientCA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		switch o.ClientAuth {
		case ClientAuthRequire:
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		case ClientAuthVerifyIfGiven:
			cfg.ClientAuth = tls.VerifyClientCertIfGiven
		default:
			return nil, ErrClientAuthMode
		}
	}
	set.cfg = cfg
	// QUIC: the same, but only h3 (an ACME tls-alpn-01 challenge never
	// comes over QUIC) and only TLS 1.3.
	set.quicCfg = cfg.Clone()
	set.quicCfg.NextProtos = []string{QUICALPN}
	set.quicCfg.MinVersion = tls.VersionTLS13
	return set, nil
}

func loadPair(f CertFiles) (tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return c, fmt.Errorf("%s, %s: %w", f.Cert, f.Key, err)
	}
	if c.Leaf == nil {
		if c.Leaf, err = x509.ParseCertificate(c.Certificate[0]); err != nil {
			return c, fmt.Errorf("%s: %w", f.Cert, err)
		}
	}
	return c, nil
}

func loadPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("edgetls: client_auth ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%w (%s)", ErrClientCA, file)
	}
	return pool, nil
}

// certNames are the names a certificate answers for, lowercase: its DNS
// subject alternative names, or its common name when it has none (old
// certificates).
func certNames(leaf *x509.Certificate) []string {
	names := leaf.DNSNames
	if len(names) == 0 && leaf.Subject.CommonName != "" {
		names = []string{leaf.Subject.CommonName}
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.ToLower(strings.TrimSuffix(n, "."))
	}
	return out
}
