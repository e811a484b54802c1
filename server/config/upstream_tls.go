package config

import (
	"crypto/tls"
	"log/slog"
	"strings"

	"github.com/simdedge/simdedge/server/edgetls"
	"go.yaml.in/yaml/v3"
)

// UpstreamTLS makes an upstream speak TLS to its targets
// (edgetls.ClientOptions):
//
//	upstreams:
//	  - name: secure
//	    targets: ["https://127.0.0.1:9443"]
//	    tls:
//	      ca: backend-ca.pem              # default: the system roots
//	      server_name: backend.internal   # default: each target's host
//	      client_cert: {cert: c.pem, key: c.key}   # default: none
//	      insecure_skip_verify: false     # true logs a warning at every (re)load
//
// An upstream is TLS when it has a tls block or its targets are written
// "https://host:port"; "http://host:port" is a plain target. Targets of an
// upstream are all of one kind: a tls block with http:// targets, or
// https:// targets beside plain ones, is an error. TLS upstreams are
// proxied on goroutines on every engine (docs/decisions/0022-upstream-tls-and-hsts.md).
type UpstreamTLS struct {
	CA                 string          `yaml:"ca,omitempty"`
	ServerName         string          `yaml:"server_name,omitempty"`
	ClientCert         *TLSCertificate `yaml:"client_cert,omitempty"`
	InsecureSkipVerify bool            `yaml:"insecure_skip_verify"`
	line               int
}

// URL schemes of stream targets; other schemes are message targets.
const (
	schemeHTTP  = "http://"
	schemeHTTPS = "https://"
)

func (d *decoder) upstreamTLS(dst **UpstreamTLS) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		t := &UpstreamTLS{line: v.Line}
		*dst = t
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"ca":          d.str(&t.CA),
			"server_name": d.str(&t.ServerName),
			"client_cert": func(v *yaml.Node, key string) {
				c := &TLSCertificate{}
				t.ClientCert = c
				d.fields(v, key, map[string]func(*yaml.Node, string){
					"cert": d.str(&c.Cert),
					"key":  d.str(&c.Key),
				})
				if c.Cert == "" || c.Key == "" {
					d.fail(v, key, "needs cert and key")
				}
			},
			"insecure_skip_verify": d.flag(&t.InsecureSkipVerify),
		})
		if strings.ContainsAny(t.ServerName, " \t\r\n/:") {
			d.fail(v, key+".server_name", "must be a host name")
		}
	}
}

// webScheme splits a target written "http://host:port" or
// "https://host:port" (scheme case-insensitive) into its host:port and
// whether it is https; ok is false for other targets. HTTP/2's h2:// and
// h2c:// (upstream_h2.go) count as https:// and http://.
func webScheme(addr string) (hostport string, https, ok bool) {
	for _, s := range []string{schemeHTTPS, schemeHTTP, schemeH2, schemeH2C} {
		if len(addr) >= len(s) && strings.EqualFold(addr[:len(s)], s) {
			return addr[len(s):], s == schemeHTTPS || s == schemeH2, true
		}
	}
	return addr, false, false
}

// IsTLS reports whether the upstream dials its targets with TLS.
func (u *Upstream) IsTLS() bool {
	if u.TLS != nil {
		return true
	}
	for _, t := range u.Targets {
		if _, https, _ := webScheme(t.Address); https {
			return true
		}
	}
	return false
}

// validateUpstreamTLS checks that an upstream's targets are of one kind
// and agree with its tls block.
func (d *decoder) validateUpstreamTLS(at *yaml.Node, key string, u *Upstream) {
	var plain, http, https, other int
	for _, t := range u.Targets {
		_, s, ok := webScheme(t.Address)
		switch {
		case !ok && !strings.Contains(t.Address, "://"):
			plain++
		case ok && s:
			https++
		case ok:
			http++
		default:
			other++
		}
	}
	switch {
	case https > 0 && (plain > 0 || http > 0):
		d.fail(at, key+".targets", "mixes https:// and plain targets")
	case u.TLS != nil && other > 0:
		d.fail(&yaml.Node{Line: u.TLS.line}, key+".tls", "only for http targets (not message targets)")
	case u.TLS != nil && http > 0:
		d.fail(&yaml.Node{Line: u.TLS.line}, key+".tls", "with http:// targets (write https:// or host:port)")
	}
}

// streamTargets strips the http:// and https:// schemes: those targets
// are host:port stream targets.
func streamTargets(targets []string) []string {
	out := make([]string, len(targets))
	for i, a := range targets {
		out[i], _, _ = webScheme(a)
	}
	return out
}

// clientTLS loads the upstream's TLS config (nil when it is plain) and
// warns, through log, when it skips verification.
func (u *Upstream) clientTLS(log *slog.Logger) (*tls.Config, error) {
	if !u.IsTLS() {
		return nil, nil
	}
	var o edgetls.ClientOptions
	if t := u.TLS; t != nil {
		o = edgetls.ClientOptions{CA: t.CA, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
		if t.ClientCert != nil {
			o.Cert = edgetls.CertFiles{Cert: t.ClientCert.Cert, Key: t.ClientCert.Key}
		}
	}
	cfg, err := edgetls.ClientConfig(o)
	if err != nil {
		return nil, err
	}
	if o.InsecureSkipVerify && log != nil {
		log.Warn("upstream tls: insecure_skip_verify is set, certificates are not verified", "upstream", u.Name)
	}
	return cfg, nil
}
