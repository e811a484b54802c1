package config

import (
	"time"

	"github.com/simdedge/simdedge/server"
	"go.yaml.in/yaml/v3"
)

// HTTP/3 in the configuration:
//
//	listeners:
//	  - address: :443
//	    tls: {...}
//	    http3: true     # QUIC on the same port over UDP; off by default
//	http3:
//	  max_streams: 100
//	  idle_timeout: 30s
//	  max_header_bytes: 65536
//	  handshake_timeout: 10s
//	  retry_threshold: 128
//	  allow_0rtt: false
//	  alt_svc_max_age: 24h
//
// HTTP/3 is off by default, as in nginx (Caddy turns it on): it opens a UDP
// port that firewalls must pass, and it is only found by clients through
// the Alt-Svc field the TCP listener's responses then carry.

// HTTP3 mirrors server.HTTP3Options (the top-level http3 block) and the
// Alt-Svc max age; zero fields take the server's defaults.
type HTTP3 struct {
	MaxStreams       int      `yaml:"max_streams"`
	IdleTimeout      Duration `yaml:"idle_timeout"`
	MaxHeaderBytes   int      `yaml:"max_header_bytes"`
	HandshakeTimeout Duration `yaml:"handshake_timeout"`
	// RetryThreshold: handshakes in flight before Retry.
	RetryThreshold int      `yaml:"retry_threshold"`
	Allow0RTT      bool     `yaml:"allow_0rtt"`
	AltSvcMaxAge   Duration `yaml:"alt_svc_max_age"`
}

// Bounds of the http3 keys.
const (
	// h3MaxStreams is http2's bound on concurrent streams.
	h3MaxStreams = h2MaxStreams
	// h3MaxRetryThreshold: more handshakes in flight than this without
	// address validation is what a flood looks like on any edge.
	h3MaxRetryThreshold = 1 << 20
	// DefaultAltSvcMaxAge is how long clients remember that HTTP/3 is
	// offered: a day, as Caddy and Cloudflare send.
	DefaultAltSvcMaxAge = 24 * time.Hour
)

func (d *decoder) http3(h *HTTP3) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		positive := func(dst *Duration) func(*yaml.Node, string) {
			return func(v *yaml.Node, key string) {
				d.duration(dst)(v, key)
				if *dst <= 0 {
					d.fail(v, key, "must be positive")
				}
			}
		}
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"max_streams":       d.boundedInt(&h.MaxStreams, 1, h3MaxStreams),
			"idle_timeout":      positive(&h.IdleTimeout),
			"max_header_bytes":  d.boundedInt(&h.MaxHeaderBytes, 1, h2MaxWindow),
			"handshake_timeout": positive(&h.HandshakeTimeout),
			"retry_threshold":   d.boundedInt(&h.RetryThreshold, 1, h3MaxRetryThreshold),
			"allow_0rtt":        d.flag(&h.Allow0RTT),
			"alt_svc_max_age":   positive(&h.AltSvcMaxAge),
		})
	}
}

func (h HTTP3) withDefaults() HTTP3 {
	o := h.Options()
	if h.AltSvcMaxAge == 0 {
		h.AltSvcMaxAge = Duration(DefaultAltSvcMaxAge)
	}
	return HTTP3{
		MaxStreams:       o.MaxStreams,
		IdleTimeout:      Duration(o.IdleTimeout),
		MaxHeaderBytes:   o.MaxHeaderBytes,
		HandshakeTimeout: Duration(o.HandshakeTimeout),
		RetryThreshold:   o.RetryThreshold,
		Allow0RTT:        o.Allow0RTT,
		AltSvcMaxAge:     h.AltSvcMaxAge,
	}
}

// Options is the server's form of the block, with its defaults.
func (h HTTP3) Options() server.HTTP3Options {
	o := server.HTTP3Options{
		MaxStreams:       h.MaxStreams,
		IdleTimeout:      time.Duration(h.IdleTimeout),
		MaxHeaderBytes:   h.MaxHeaderBytes,
		HandshakeTimeout: time.Duration(h.HandshakeTimeout),
		RetryThreshold:   h.RetryThreshold,
		Allow0RTT:        h.Allow0RTT,
	}
	return o.WithDefaults()
}

// AltSvc is the Alt-Svc value a listener with http3 on port sends.
func (h HTTP3) AltSvc(port int) string {
	age := time.Duration(h.AltSvcMaxAge)
	if age == 0 {
		age = DefaultAltSvcMaxAge
	}
	return server.H3AltSvc(port, age)
}

// validateHTTP3 checks a listener's http3 key against its kind.
func (l *Listener) validateHTTP3(d *decoder, at *yaml.Node, key string) {
	if l.HTTP3 && (l.TLS == nil || l.Transport != "" && l.Transport != TransportTCP && l.Transport != TransportXDP) {
		d.fail(at, key+".http3", "only on a tcp or xdp listener with tls (QUIC is always encrypted)")
	}
	if x := l.XDP; l.HTTP3 && l.Transport == TransportXDP && x != nil {
		// QUIC takes the UDP port over AF_XDP; the userspace TCP stack
		// has no TLS, so HTTP/1.1 and HTTP/2 come from a tcp listener.
		if x.UDPPort == 0 {
			d.fail(at, key+".xdp.udp_port", "needed by http3: true (QUIC is served there)")
		}
		if x.TCPPort != 0 {
			d.fail(at, key+".xdp.tcp_port", "not with http3: true (the userspace TCP stack has no TLS; serve HTTP/1.1 and HTTP/2 from a tcp listener)")
		}
	}
	if l.HTTP3 && l.ProxyProtocol {
		// The PROXY header comes on TCP connections; QUIC clients would
		// be known by another address than the TCP ones.
		d.fail(at, key+".http3", "not with proxy_protocol")
	}
}
