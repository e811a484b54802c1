package server

import (
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2MapRecorder answers 200 and records what its handler saw of each
// request: method, target, Host and every host field.
type h2MapRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (h *h2MapRecorder) ServeEdge(w *ResponseWriter, r *Request) {
	var hosts []string
	hs := r.Headers()
	for i := hs.Index("Host", 0); i >= 0; i = hs.Index("Host", i+1) {
		hosts = append(hosts, string(hs[i].Value))
	}
	h.mu.Lock()
	h.seen = append(h.seen, fmt.Sprintf("%s %s host=%s fields=%q", r.Method(), r.Target(), r.Host(), hosts))
	h.mu.Unlock()
	w.WriteString("ok")
}

func (h *h2MapRecorder) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.seen
	h.seen = nil
	return s
}

// h2MapCase is a request head as raw (name, value) pairs, in order, and
// what the handler must see of it ("" when the stream must be reset with
// PROTOCOL_ERROR and the handler never run).
type h2MapCase struct {
	fields []string
	want   string
}

// h2Req is a head with :method, :scheme and :path, then extra fields.
func h2Req(method, path string, extra ...string) []string {
	return append([]string{":method", method, ":scheme", "https", ":path", path}, extra...)
}

// h2MapCases: issue 27's HTTP/2 to HTTP/1.1 mapping. The edge routes on
// the head's Host and method and target, so a request whose :authority
// and host field disagree, or whose :method, :path or :authority an
// HTTP/1.1 parser would refuse, must not reach a handler (RFC 9113
// §8.1.1, §8.3.1).
func h2MapCases() []h2MapCase {
	auth := func(a string) []string { return []string{":authority", a} }
	bad := func(fields ...string) h2MapCase { return h2MapCase{fields: fields} }
	var cs []h2MapCase
	cs = append(cs,
		h2MapCase{h2Req("GET", "/p?q=1", auth("pub.example")...), `GET /p?q=1 host=pub.example fields=["pub.example"]`},
		// Both, agreeing up to ASCII case: one field, :authority's spelling.
		h2MapCase{h2Req("GET", "/p", append(auth("pub.example"), "host", "PUB.example")...), `GET /p host=pub.example fields=["pub.example"]`},
		// host alone is the Host (§8.3.1 makes :authority optional).
		h2MapCase{h2Req("GET", "/p", "host", "pub.example:8443"), `GET /p host=pub.example:8443 fields=["pub.example:8443"]`},
		// Empty, as an HTTP/1.1 "Host:" may be (RFC 9110 §7.2).
		h2MapCase{h2Req("GET", "/p", auth("")...), `GET /p host= fields=[""]`},
		h2MapCase{h2Req("OPTIONS", "*", auth("pub.example")...), `OPTIONS * host=pub.example fields=["pub.example"]`},
		h2MapCase{h2Req("M-SEARCH", "/", auth("[::1]:80")...), `M-SEARCH / host=[::1]:80 fields=["[::1]:80"]`},
		h2MapCase{[]string{":method", "CONNECT", ":authority", "pub.example:443"}, `CONNECT pub.example:443 host=pub.example:443 fields=["pub.example:443"]`},
		// Host confusion: the router would read one, an upstream the other.
		bad(h2Req("GET", "/p", append(auth("pub.example"), "host", "admin.example")...)...),
		bad(h2Req("GET", "/p", append(auth("admin.example"), "host", "pub.example")...)...),
		bad(h2Req("GET", "/p", append(auth("pub.example"), "host", "pub.example:443")...)...),
		bad(h2Req("GET", "/p", append(auth(""), "host", "pub.example")...)...),
		bad(h2Req("GET", "/p", "host", "pub.example", "host", "admin.example")...),
		bad(h2Req("GET", "/p", "host", "pub.example", "host", "pub.example")...),
		bad(h2Req("GET", "/p", "host", "u@pub.example")...),
		// :method must be a token.
		bad(h2Req("GET /admin/x", "/pub", auth("pub.example")...)...),
		bad(h2Req("GET\t/admin/x", "/pub", auth("pub.example")...)...),
		bad(h2Req("GE(T", "/pub", auth("pub.example")...)...),
		bad(h2Req("", "/pub", auth("pub.example")...)...),
		bad(h2Req("G\xe9T", "/pub", auth("pub.example")...)...),
		// CONNECT keeps §8.5: :authority, no :path or :scheme.
		bad(":method", "CONNECT", ":authority", "pub.example:443", ":path", "/"),
		bad(":method", "CONNECT", ":scheme", "https", ":authority", "pub.example:443"),
		bad(":method", "CONNECT"),
		bad(":method", "CONNECT", ":authority", "u@pub.example:443"),
	)
	// :path is an origin-form target as the HTTP/1.1 parser reads one,
	// or "*" with OPTIONS.
	for _, p := range []string{"/a b", "/a\tb", "/a#b", "/\x80", "/\xff", "*", "pub", "http://admin.example/x", "\\admin"} {
		cs = append(cs, bad(h2Req("GET", p, auth("pub.example")...)...))
	}
	// :authority is checked as HTTP/1.1's Host.
	for _, a := range []string{"u@pub.example", "u:p@pub.example", "pub.example/x", "pub.example?x", "pub.example#x",
		"pub.example\\x", "pub .example", "pub.example:x", "pub.example:1:2", "[::1", "pub\x7f.example", "p\xc3\xbcb.example"} {
		cs = append(cs, bad(h2Req("GET", "/p", auth(a)...)...))
	}
	return cs
}

// TestH2RequestMapping runs h2MapCases over h2c and TLS on every engine:
// before issue 27's fix the host field won over :authority for the
// upstream (but not for the router), and the bad methods, paths and
// authorities reached the handler.
func TestH2RequestMapping(t *testing.T) {
	rec := &h2MapRecorder{}
	_, h2cAddr := startH2C(t, rec, Options{})
	p, tlsAddr := startH2TLS(t, rec)
	dialers := map[string]func() net.Conn{
		"h2c": func() net.Conn { return dial(t, h2cAddr) },
		"tls": func() net.Conn {
			c := tls.Client(dial(t, tlsAddr), &tls.Config{ServerName: "a.example", RootCAs: p.ca.Pool, NextProtos: []string{"h2"}})
			if err := c.Handshake(); err != nil || c.ConnectionState().NegotiatedProtocol != "h2" {
				t.Fatalf("TLS: %v, ALPN %q", err, c.ConnectionState().NegotiatedProtocol)
			}
			return c
		},
	}
	for _, name := range []string{"h2c", "tls"} {
		t.Run(name, func(t *testing.T) {
			h := startH2Raw(t, dialers[name]())
			id := uint32(1)
			for _, tc := range h2MapCases() {
				h.headers(id, true, rawBlock(h, tc.fields...))
				status, code := h.waitStream(id)
				id += 2
				seen := rec.take()
				switch {
				case tc.want == "" && (code != http2.ErrCodeProtocol || len(seen) != 0):
					t.Errorf("%q: status %q reset %v, handler saw %q; want a PROTOCOL_ERROR reset", tc.fields, status, code, seen)
				case tc.want != "" && (status != "200" || len(seen) != 1 || seen[0] != tc.want):
					t.Errorf("%q: status %q reset %v, handler saw %q; want %q", tc.fields, status, code, seen, tc.want)
				}
			}
		})
	}
}

// rawBlock encodes fields (name, value pairs, in order) with h's encoder,
// whatever they hold.
func rawBlock(h *h2raw, fields ...string) []byte {
	h.buf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		h.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append([]byte(nil), h.buf.Bytes()...)
}
