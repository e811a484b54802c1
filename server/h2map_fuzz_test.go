package server

import (
	"testing"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// FuzzH2RequestHead checks the HTTP/2 head mapping (h2map.go) against the
// HTTP/1.1 parser: an HTTP/2 request with :method, :path (none for
// CONNECT), and, by mode, :authority (bit 0) and a host field (bit 1) is
// accepted exactly when parse/http accepts the same method, target and
// Host as the request line and one Host field of an HTTP/1.1 request
// (HTTP/1.0 when the HTTP/2 request names no host), apart from the
// divergences written below, each a rule of RFC 9113. What it accepts
// then reads as the HTTP/1.1 request would: same method, target and
// Host, and exactly one host field, holding that Host.
func FuzzH2RequestHead(f *testing.F) {
	for _, s := range []struct {
		method, path, authority, host string
		mode                          uint8
	}{
		{"GET", "/", "a.example", "", 1},
		{"GET", "/pub", "pub.example", "admin.example", 3},
		{"GET", "/pub", "pub.example", "PUB.EXAMPLE", 3},
		{"GET", "/p", "", "a.example:8080", 2},
		{"GET", "/p", "", "", 0},
		{"GET /admin/x", "/pub", "a.example", "", 1},
		{"OPTIONS", "*", "a.example", "", 1},
		{"GET", "*", "a.example", "", 1},
		{"CONNECT", "", "a.example:443", "", 1},
		{"CONNECT", "", "u@a.example:443", "", 1},
		{"GET", "http://a.example/x", "a.example", "", 1},
		{"GET", "/a#b", "u@a.example", "", 1},
		{"GET", "/a b", "a.example/x", "", 1},
		{"GET", "/\x80", "[::1]:80", "", 1},
		{"GET", "/", "a.example\r\nHost: b.example", "", 1},
		{"GET", "/", " a.example", "", 1},
		{"GET", "/", "", "", 1},
	} {
		f.Add(s.method, s.path, s.authority, s.host, s.mode)
	}
	lim := &HTTP2Limits{MaxHeaderListSize: 1 << 16}
	f.Fuzz(func(t *testing.T, method, path, authority, host string, mode uint8) {
		if len(method)+len(path)+len(authority)+len(host) > 2<<10 {
			return // under both sides' limits; limits are not compared
		}
		hasAuth, hasHost := mode&1 != 0, mode&2 != 0
		connect := method == "CONNECT"

		// The HTTP/2 side, as the HPACK decoder passes each field on.
		hc := &h2conn{lim: lim}
		hc.hd.reset(nil, false)
		hc.hd.field(":method", method, lim.MaxHeaderListSize, false)
		target := authority
		if !connect {
			target = path
			hc.hd.field(":scheme", "https", lim.MaxHeaderListSize, false)
			hc.hd.field(":path", path, lim.MaxHeaderListSize, false)
		}
		if hasAuth {
			hc.hd.field(":authority", authority, lim.MaxHeaderListSize, false)
		}
		if hasHost {
			hc.hd.field("host", host, lim.MaxHeaderListSize, false)
		}
		var head phttp.Request
		h2ok := !hc.hd.malformed && hc.hd.buildHead(&head, true)

		// The HTTP/1.1 side: the Host the HTTP/2 request names, once.
		hostVal, named := "", hasAuth || hasHost
		switch {
		case hasAuth:
			hostVal = authority
		case hasHost:
			hostVal = host
		}
		raw := method + " " + target + " HTTP/1.1\r\nHost: " + hostVal + "\r\n\r\n"
		if !named {
			// Divergence: HTTP/2 needs no host at all (§8.3.1 makes
			// :authority optional), HTTP/1.1 does (RFC 9112 §3.2);
			// HTTP/1.0 has the same request line without it.
			raw = method + " " + target + " HTTP/1.0\r\n\r\n"
		}
		var req phttp.Request
		n, err := phttp.ParseRequest([]byte(raw), &req)
		want := err == nil && n == len(raw) && string(req.Method) == method &&
			string(req.Target) == target && string(req.Host) == hostVal
		// Divergences, each stricter on the HTTP/2 side:
		switch {
		case connect && !hasAuth:
			// §8.5: CONNECT names its target in :authority.
			want = false
		case !connect && want && target[0] != '/' && target != "*":
			// §8.3.1: :path is origin-form or "*"; the absolute form
			// HTTP/1.1 sends to proxies is :scheme and :authority.
			want = false
		case hasAuth && hasHost && !phttp.EqualFold([]byte(authority), host):
			// §8.3.1: :authority and host must name the same host
			// (HTTP/1.1 has one field; two would be ErrMultipleHost).
			want = false
		}
		if h2ok != want {
			t.Fatalf("HTTP/2 accepts %v, HTTP/1.1 %v (%v, %d of %d bytes): %q %q :authority %v %q host %v %q",
				h2ok, want, err, n, len(raw), method, path, hasAuth, authority, hasHost, host)
		}
		if !h2ok {
			return
		}
		hosts := 0
		for _, h := range head.Headers {
			if phttp.EqualFold(h.Name, "host") {
				hosts++
				if string(h.Value) != hostVal {
					t.Fatalf("host field %q, routed on %q", h.Value, hostVal)
				}
			}
		}
		if string(head.Method) != method || string(head.Target) != target || string(head.Host) != hostVal ||
			named && hosts != 1 || !named && (hosts != 0 || head.Host != nil) {
			t.Fatalf("head %q %q Host %q with %d host fields; want %q %q Host %q", head.Method, head.Target, head.Host, hosts, method, target, hostVal)
		}
	})
}
