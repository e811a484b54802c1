package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server"
)

// TestHTTP2Keys: the http2 block reaches server.Options, defaults fill
// what is left out, h2c and http2 are checked against the listener's kind
// and http2: false takes h2 out of the default ALPN.
func TestHTTP2Keys(t *testing.T) {
	cfg, err := Parse([]byte(`
listeners:
  - address: 127.0.0.1:0
    h2c: true
  - address: 127.0.0.1:0
    tls: {certificates: [{cert: a.pem, key: a.key}]}
  - address: 127.0.0.1:0
    tls: {certificates: [{cert: a.pem, key: a.key}]}
    http2: false
http2:
  max_concurrent_streams: 50
  initial_stream_window: 1048576
  max_idle_frames: 5000
routes:
  - respond: {status: 200}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.ServerOptions().HTTP2
	if o.MaxConcurrentStreams != 50 || o.InitialStreamWindow != 1<<20 || o.MaxFrameSize != server.DefaultH2MaxFrameSize || o.MaxResets != server.DefaultH2MaxResets ||
		o.MaxIdleFrames != 5000 || o.MaxContinuations != server.DefaultH2MaxContinuations {
		t.Errorf("http2 options %+v", o)
	}
	ls := cfg.Listeners
	if !ls[0].H2C || ls[1].H2C {
		t.Errorf("h2c %v %v", ls[0].H2C, ls[1].H2C)
	}
	if alpn := ls[1].TLS.Options().WithDefaults().ALPN; !slices.Equal(alpn, []string{"h2", "http/1.1"}) {
		t.Errorf("default alpn %v", alpn)
	}
	if alpn := ls[2].TLS.Options().WithDefaults().ALPN; !slices.Equal(alpn, []string{"http/1.1"}) {
		t.Errorf("http2: false alpn %v", alpn)
	}
	if d := cfg.WithDefaults(); d.Listeners[1].HTTP2 == nil || !*d.Listeners[1].HTTP2 || d.HTTP2.MaxHeaderListSize != server.DefaultH2MaxHeaderListSize ||
		d.HTTP2.MaxContinuations != server.DefaultH2MaxContinuations || d.HTTP2.MaxIdleFrames != 5000 {
		t.Errorf("defaults: listener http2 %v, block %+v", d.Listeners[1].HTTP2, d.HTTP2)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"listeners: [{address: 127.0.0.1:0, h2c: true, tls: {certificates: [{cert: a, key: b}]}}]", "listeners[0].h2c"},
		{"listeners: [{address: 127.0.0.1:0, http2: true}]", "listeners[0].http2"},
		{"listeners: [{address: 127.0.0.1:0, http2: false, tls: {alpn: [h2], certificates: [{cert: a, key: b}]}}]", "tls.alpn lists h2"},
		{"http2: {max_frame_size: 100}", "http2.max_frame_size"},
		{"http2: {conn_window: 10}", "http2.conn_window"},
		{"http2: {max_continuations: 0}", "http2.max_continuations"},
		{"http2: {max_continuations: 100000}", "http2.max_continuations"},
		{"http2: {max_idle_frames: -1}", "http2.max_idle_frames"},
		{"http2: {bogus: 1}", "http2.bogus"},
	} {
		_, err := Parse([]byte(tc.yaml + "\nroutes: [{respond: {status: 200}}]\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.yaml, err, tc.want)
		}
	}
}

// TestHTTP3Keys: http3 is for TLS listeners only, the block's bounds are
// checked, and the defaults fill in.
func TestHTTP3Keys(t *testing.T) {
	for _, src := range []string{
		"listeners:\n  - address: \"127.0.0.1:0\"\n    http3: true\n",
		"http3:\n  max_streams: 0\n",
		"http3:\n  retry_threshold: 0\n",
		"http3:\n  idle_timeout: 0s\n",
		"http3:\n  allow_0rtt: maybe\n",
	} {
		if _, err := Parse([]byte(src + "routes: [{respond: {status: 200}}]\n")); err == nil {
			t.Errorf("accepted:\n%s", src)
		}
	}
	c, err := Parse([]byte("http3:\n  max_streams: 7\n  alt_svc_max_age: 1h\nroutes: [{respond: {status: 200}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	o := c.HTTP3.Options()
	if o.MaxStreams != 7 || o.IdleTimeout != server.DefaultH3IdleTimeout || o.RetryThreshold != server.DefaultH3RetryThreshold {
		t.Errorf("options %+v", o)
	}
	if got := c.HTTP3.AltSvc(443); got != `h3=":443"; ma=3600` {
		t.Errorf("AltSvc %q", got)
	}
}
