package config

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/pathnorm"
)

// TestPathKeys: the path normalisation keys reach server.Options, a
// listener's override, and a route's PathAsSent; defaults normalise; bad
// values and keys on non-tcp listeners are refused by name.
func TestPathKeys(t *testing.T) {
	def, err := Parse([]byte("routes: [{respond: {status: 200}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if o := def.ServerOptions().Paths; o != (pathnorm.Options{}) {
		t.Errorf("default %+v, want normalisation on", o)
	}
	if e := def.WithDefaults().Paths; !*e.NormalizePath || !*e.MergeSlashes || e.EscapedSlashes != EscapedKeep {
		t.Errorf("effective defaults %+v", e)
	}
	cfg, err := Parse([]byte(`
merge_slashes: false
escaped_slashes: reject
listeners:
  - address: 127.0.0.1:0
  - address: 127.0.0.1:1
    normalize_path: false
  - address: 127.0.0.1:2
    escaped_slashes: unescape
routes:
  - match: {path_prefix: /raw/}
    normalize_path: false
    respond: {status: 200}
  - respond: {status: 200}
`))
	if err != nil {
		t.Fatal(err)
	}
	top := pathnorm.Options{KeepSlashes: true, EscapedSlashes: pathnorm.Reject}
	if o := cfg.ServerOptions().Paths; o != top {
		t.Errorf("top level %+v, want %+v", o, top)
	}
	ls := cfg.Listeners
	if o := cfg.ListenerPaths(ls[0]); o != nil {
		t.Errorf("listener 0 %+v, want the top level's (nil)", *o)
	}
	if o := cfg.ListenerPaths(ls[1]); o == nil || *o != (pathnorm.Options{Off: true, KeepSlashes: true, EscapedSlashes: pathnorm.Reject}) {
		t.Errorf("listener 1 %+v", o)
	}
	if o := cfg.ListenerPaths(ls[2]); o == nil || *o != (pathnorm.Options{KeepSlashes: true, EscapedSlashes: pathnorm.Unescape}) {
		t.Errorf("listener 2 %+v", o)
	}
	if r := cfg.Routes[0].NormalizePath; r == nil || *r {
		t.Errorf("route normalize_path %v", r)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"escaped_slashes: drop", "escaped_slashes"},
		{"normalize_path: 1", "normalize_path"},
		{"listeners: [{transport: rdma, address: 127.0.0.1:1, merge_slashes: false}]", "for transport: tcp"},
		{"routes: [{merge_slashes: false, respond: {status: 200}}]", "merge_slashes"},
	} {
		y := tc.yaml
		if !strings.Contains(y, "routes:") {
			y += "\nroutes: [{respond: {status: 200}}]\n"
		}
		if _, err := Parse([]byte(y)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error naming %q", tc.yaml, err, tc.want)
		}
	}
}
