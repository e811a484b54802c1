package config

import (
	"fmt"
	"time"

	"github.com/simdedge/simdedge/server/edgetls"
	"go.yaml.in/yaml/v3"
)

// ListenerTLS terminates TLS on a tcp listener (edgetls.Options). Zero
// fields take edgetls's defaults, which WithDefaults prints.
type ListenerTLS struct {
	// Certificates are chosen by SNI: the exact name, then a one-label
	// wildcard; the first is the default.
	Certificates []TLSCertificate `yaml:"certificates"`
	// MinVersion is "1.2" (default) or "1.3"; 1.3 is preferred.
	MinVersion string `yaml:"min_version"`
	// ALPN protocols in order of preference; default [http/1.1].
	ALPN []string `yaml:"alpn,flow"`
	// ClientAuth asks clients for certificates signed by a CA (mTLS).
	ClientAuth *ClientAuth `yaml:"client_auth,omitempty"`
	// HandshakeTimeout bounds the handshake (default 10s).
	HandshakeTimeout Duration `yaml:"handshake_timeout"`
	// TicketRotation is how often a new session ticket key starts
	// (default 1h; 24 keys are kept for resumption).
	TicketRotation Duration `yaml:"ticket_rotation"`
	// ACME obtains and renews certificates for its domains (acme.go);
	// with it, certificates may be empty.
	ACME *ACME `yaml:"acme,omitempty"`
	line int
	// noH2: the listener says http2: false (http2.go).
	noH2 bool
}

// TLSCertificate is a PEM certificate chain and its PEM key.
type TLSCertificate struct {
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// ClientAuth is mTLS: which CA signs client certificates, and whether one
// is required ("require") or only checked when sent ("verify_if_given",
// the default).
type ClientAuth struct {
	CA   string `yaml:"ca"`
	Mode string `yaml:"mode"`
}

func (d *decoder) listenerTLS(dst **ListenerTLS) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		t := &ListenerTLS{line: v.Line}
		*dst = t
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"certificates": func(v *yaml.Node, key string) {
				if v.Kind != yaml.SequenceNode {
					d.fail(v, key, "must be a list")
					return
				}
				for i, e := range v.Content {
					var c TLSCertificate
					d.fields(e, fmt.Sprintf("%s[%d]", key, i), map[string]func(*yaml.Node, string){
						"cert": d.str(&c.Cert),
						"key":  d.str(&c.Key),
					})
					if c.Cert == "" || c.Key == "" {
						d.fail(e, fmt.Sprintf("%s[%d]", key, i), "needs cert and key")
					}
					t.Certificates = append(t.Certificates, c)
				}
			},
			"min_version": func(v *yaml.Node, key string) {
				d.str(&t.MinVersion)(v, key)
				if _, ok := edgetls.ParseVersion(t.MinVersion); !ok && t.MinVersion != "" {
					d.fail(v, key, `must be "1.2" or "1.3"`)
				}
			},
			"alpn": func(v *yaml.Node, key string) {
				d.strings(&t.ALPN)(v, key)
				for i, p := range t.ALPN {
					// RFC 7301 §3.1: 1-255 bytes.
					if len(p) == 0 || len(p) > maxALPNProtocol {
						d.fail(v, fmt.Sprintf("%s[%d]", key, i), "must be 1-255 bytes")
					}
				}
			},
			"client_auth": func(v *yaml.Node, key string) {
				t.ClientAuth = &ClientAuth{}
				ca := t.ClientAuth
				d.fields(v, key, map[string]func(*yaml.Node, string){
					"ca":   d.str(&ca.CA),
					"mode": d.str(&ca.Mode),
				})
				if ca.CA == "" {
					d.fail(v, key+".ca", "missing")
				}
				switch edgetls.ClientAuthMode(ca.Mode) {
				case "", edgetls.ClientAuthRequire, edgetls.ClientAuthVerifyIfGiven:
				default:
					d.fail(v, key+".mode", `must be "require" or "verify_if_given"`)
				}
			},
			"handshake_timeout": d.duration(&t.HandshakeTimeout),
			"ticket_rotation":   d.duration(&t.TicketRotation),
			"acme":              d.acme(&t.ACME),
		})
		if len(t.Certificates) == 0 && t.ACME == nil {
			d.fail(v, key+".certificates", "at least one {cert, key} is needed (or acme)")
		}
	}
}

// maxALPNProtocol is the longest protocol name ALPN can carry (RFC 7301
// §3.1: a one-byte length).
const maxALPNProtocol = 255

// validateTLS checks what involves other keys: tls and redirect_to_https
// only on tcp listeners, and a redirect needs a TLS listener to point to.
func (c *Config) validateTLS(d *decoder, at *yaml.Node, key string, l Listener) {
	if l.TLS != nil && l.Transport != "" && l.Transport != TransportTCP && (l.Transport != TransportXDP || !l.HTTP3) {
		d.fail(at, key+".tls", "only for transport: tcp, or xdp with http3: true")
	}
	if l.TLS.acme() != nil && l.Transport == TransportXDP {
		// Its challenges are answered on kernel TCP sockets.
		d.fail(at, key+".tls.acme", "not on an xdp listener")
	}
	// The checks below read the other listeners too.
	others := !d.failedWithin("listeners")
	if a := l.TLS.acme(); a != nil && others {
		a.httpAddr = c.httpChallengeAddress()
		if a.httpAddr == "" && !a.Allows(ChallengeTLSALPN01) {
			d.fail(at, key+".tls.acme.challenges", "http-01 alone needs a redirect_to_https listener to answer it")
		}
	}
	if !l.RedirectToHTTPS {
		return
	}
	switch {
	case l.TLS != nil:
		d.fail(at, key+".redirect_to_https", "only on a plain listener")
	case l.Transport != "" && l.Transport != TransportTCP:
		d.fail(at, key+".redirect_to_https", "only for transport: tcp")
	case c.HTTPSListener() == nil && others:
		d.fail(at, key+".redirect_to_https", "needs a listener with tls")
	}
}

// HTTPSListener is the listener redirect_to_https points to: the first
// tcp listener with tls (nil if none).
func (c *Config) HTTPSListener() *Listener {
	for i := range c.Listeners {
		if l := &c.Listeners[i]; l.TLS != nil && (l.Transport == "" || l.Transport == TransportTCP) {
			return l
		}
	}
	return nil
}

func (t *ListenerTLS) acme() *ACME {
	if t == nil {
		return nil
	}
	return t.ACME
}

// httpChallengeAddress is where ACME's HTTP-01 is answered: the first
// redirect_to_https listener (port 80 in production).
func (c *Config) httpChallengeAddress() string {
	for _, l := range c.Listeners {
		if l.RedirectToHTTPS {
			return l.Address
		}
	}
	return ""
}

func (t *ListenerTLS) withDefaults() *ListenerTLS {
	if t == nil {
		return nil
	}
	o := t.Options().WithDefaults()
	e := *t
	e.Certificates = append([]TLSCertificate(nil), t.Certificates...)
	e.MinVersion = edgetls.VersionName(o.MinVersion)
	e.ALPN = o.ALPN
	e.HandshakeTimeout = Duration(o.HandshakeTimeout)
	e.TicketRotation = Duration(o.TicketRotation)
	e.ACME = t.ACME.withDefaults()
	if t.ClientAuth != nil {
		ca := *t.ClientAuth
		ca.Mode = string(o.ClientAuth)
		e.ClientAuth = &ca
	}
	return &e
}

// Options converts t to the edgetls options it configures.
func (t *ListenerTLS) Options() edgetls.Options {
	o := edgetls.Options{
		HandshakeTimeout: time.Duration(t.HandshakeTimeout),
		TicketRotation:   time.Duration(t.TicketRotation),
	}
	if len(t.ALPN) > 0 {
		o.ALPN = append([]string(nil), t.ALPN...)
	} else if t.noH2 {
		o.ALPN = alpnWithoutH2(edgetls.DefaultALPN) // http2: false (http2.go)
	}
	o.MinVersion, _ = edgetls.ParseVersion(t.MinVersion)
	for _, c := range t.Certificates {
		o.Certificates = append(o.Certificates, edgetls.CertFiles{Cert: c.Cert, Key: c.Key})
	}
	if t.ACME != nil {
		o.ManagedNames = append([]string(nil), t.ACME.Domains...)
	}
	if t.ClientAuth != nil {
		o.ClientCA = t.ClientAuth.CA
		o.ClientAuth = edgetls.ClientAuthMode(t.ClientAuth.Mode)
	}
	return o
}
