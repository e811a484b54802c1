package config

import (
	"slices"

	"github.com/simdedge/simdedge/server"
	"go.yaml.in/yaml/v3"
)

// HTTP/2 in the configuration:
//
//	listeners:
//	  - address: :443
//	    tls: {...}
//	    http2: true     # h2 offered by ALPN; the default on TLS listeners
//	  - address: :8080
//	    h2c: true       # HTTP/2 with prior knowledge beside HTTP/1.1; off by default
//	http2:
//	  max_concurrent_streams: 100
//	  max_header_list_size: 65536
//	  max_frame_size: 16384
//	  initial_stream_window: 262144
//	  conn_window: 1048576
//	  max_resets: 200
//	  max_continuations: 8
//	  max_idle_frames: 1000
//
// h2 is on by default for TLS listeners, as in Caddy (nginx needs
// `http2 on`): browsers reach an edge over HTTP/2, and ALPN lets a client
// that wants HTTP/1.1 have it. `http2: false` leaves h2 out of the default
// ALPN list; an explicit tls.alpn list is used as written. h2c is off by
// default: a plaintext listener answers the preface 505 unless it says
// `h2c: true`.

// HTTP2 mirrors server.HTTP2Limits (the top-level http2 block); zero
// fields take the server's defaults.
type HTTP2 struct {
	MaxConcurrentStreams int `yaml:"max_concurrent_streams"`
	MaxHeaderListSize    int `yaml:"max_header_list_size"`
	MaxFrameSize         int `yaml:"max_frame_size"`
	InitialStreamWindow  int `yaml:"initial_stream_window"`
	ConnWindow           int `yaml:"conn_window"`
	MaxResets            int `yaml:"max_resets"`
	MaxContinuations     int `yaml:"max_continuations"`
	MaxIdleFrames        int `yaml:"max_idle_frames"`
}

// Bounds of the http2 keys (RFC 9113 §6.5.2, §6.9.1).
const (
	h2MinFrame  = 1 << 14
	h2MaxFrame  = 1<<24 - 1
	h2MaxWindow = 1<<31 - 1
	// h2MaxStreams: more streams per connection than this only lets one
	// client hold more handlers; nginx caps its setting lower still.
	h2MaxStreams = 1 << 16
	// h2MinConnWindow is the protocol's initial connection window, which
	// the server can only raise.
	h2MinConnWindow = 65535
	// h2MaxContinuations: a header block of MaxHeaderListSize in frames
	// of the smallest size a client may choose (16 KiB) needs at most
	// 1,025 for the largest list (16 MiB); more only helps a flood.
	h2MaxContinuations = 1 << 10
)

func (d *decoder) http2(h *HTTP2) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"max_concurrent_streams": d.boundedInt(&h.MaxConcurrentStreams, 1, h2MaxStreams),
			"max_header_list_size":   d.boundedInt(&h.MaxHeaderListSize, 1, h2MaxWindow),
			"max_frame_size":         d.boundedInt(&h.MaxFrameSize, h2MinFrame, h2MaxFrame),
			"initial_stream_window":  d.boundedInt(&h.InitialStreamWindow, 1, h2MaxWindow),
			"conn_window":            d.boundedInt(&h.ConnWindow, h2MinConnWindow, h2MaxWindow),
			"max_resets":             d.boundedInt(&h.MaxResets, 1, h2MaxWindow),
			"max_continuations":      d.boundedInt(&h.MaxContinuations, 1, h2MaxContinuations),
			"max_idle_frames":        d.boundedInt(&h.MaxIdleFrames, 1, h2MaxWindow),
		})
	}
}

func (h HTTP2) withDefaults() HTTP2 {
	o := h.limits().WithDefaults()
	return HTTP2{
		MaxConcurrentStreams: o.MaxConcurrentStreams,
		MaxHeaderListSize:    o.MaxHeaderListSize,
		MaxFrameSize:         o.MaxFrameSize,
		InitialStreamWindow:  o.InitialStreamWindow,
		ConnWindow:           o.ConnWindow,
		MaxResets:            o.MaxResets,
		MaxContinuations:     o.MaxContinuations,
		MaxIdleFrames:        o.MaxIdleFrames,
	}
}

func (h HTTP2) limits() server.HTTP2Limits {
	return server.HTTP2Limits{
		MaxConcurrentStreams: h.MaxConcurrentStreams,
		MaxHeaderListSize:    h.MaxHeaderListSize,
		MaxFrameSize:         h.MaxFrameSize,
		InitialStreamWindow:  h.InitialStreamWindow,
		ConnWindow:           h.ConnWindow,
		MaxResets:            h.MaxResets,
		MaxContinuations:     h.MaxContinuations,
		MaxIdleFrames:        h.MaxIdleFrames,
	}
}

// listenerHTTP2 decodes a listener's h2c and http2 keys.
func (d *decoder) listenerHTTP2(l *Listener) map[string]func(*yaml.Node, string) {
	return map[string]func(*yaml.Node, string){
		"h2c":   d.flag(&l.H2C),
		"http2": d.boolean(&l.HTTP2),
	}
}

// validateHTTP2 checks a listener's h2c and http2 against its kind, and
// tells its TLS options whether h2 is offered.
func (l *Listener) validateHTTP2(d *decoder, at *yaml.Node, key string) {
	tcp := l.Transport == "" || l.Transport == TransportTCP
	if l.H2C && (!tcp || l.TLS != nil || l.RedirectToHTTPS) {
		d.fail(at, key+".h2c", "only on a plain tcp listener (TLS listeners offer h2 by ALPN: http2)")
	}
	if l.HTTP2 != nil && l.TLS == nil {
		d.fail(at, key+".http2", "only on a TLS listener (plain listeners: h2c)")
	}
	if l.TLS != nil && l.HTTP2 != nil && !*l.HTTP2 {
		if slices.Contains(l.TLS.ALPN, h2ALPN) {
			d.fail(at, key+".http2", "false, but tls.alpn lists h2")
		}
		l.TLS.noH2 = true
	}
}

// h2ALPN is HTTP/2's ALPN protocol name.
const h2ALPN = "h2"

// http2Defaults fills in http2 for a TLS listener (WithDefaults).
func (l *Listener) http2Defaults() {
	if l.TLS != nil && l.HTTP2 == nil {
		on := true
		l.HTTP2 = &on
	}
}

// alpnWithoutH2 is the default ALPN list of a listener with http2: false.
func alpnWithoutH2(def []string) []string {
	return slices.DeleteFunc(slices.Clone(def), func(p string) bool { return p == h2ALPN })
}
