package proxy

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/router"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2wire is an HTTP/2 client on x/net's Framer and hpack that sends
// header blocks as given, valid or not.
type h2wire struct {
	t   *testing.T
	fr  *http2.Framer
	enc *hpack.Encoder
	buf bytes.Buffer
	id  uint32
}

// dialH2Wire connects to addr with h2c prior knowledge, or over TLS
// (ALPN h2, edge.example verified against ca) when ca is set.
func dialH2Wire(t *testing.T, addr string, ca *testcert.CA) *h2wire {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	if ca != nil {
		tc := tls.Client(c, &tls.Config{ServerName: "edge.example", RootCAs: ca.Pool, NextProtos: []string{"h2"}})
		if err := tc.Handshake(); err != nil || tc.ConnectionState().NegotiatedProtocol != "h2" {
			t.Fatalf("TLS: %v, ALPN %q", err, tc.ConnectionState().NegotiatedProtocol)
		}
		c = tc
	}
	io.WriteString(c, http2.ClientPreface)
	w := &h2wire{t: t, fr: http2.NewFramer(c, c), id: 1}
	w.enc = hpack.NewEncoder(&w.buf)
	w.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	w.fr.WriteSettings()
	return w
}

// do sends fields (name, value pairs, in order) as a request head that
// ends its stream, and reads until the stream ends: the response status
// and body, or the reset's code.
func (w *h2wire) do(fields ...string) (status, body string, code http2.ErrCode) {
	w.t.Helper()
	w.buf.Reset()
	for i := 0; i+1 < len(fields); i += 2 {
		w.enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	id := w.id
	w.id += 2
	if err := w.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: w.buf.Bytes(), EndStream: true, EndHeaders: true}); err != nil {
		w.t.Fatal(err)
	}
	var b []byte
	for {
		f, err := w.fr.ReadFrame()
		if err != nil {
			w.t.Fatalf("stream %d: %v", id, err)
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				w.fr.WriteSettingsAck()
			}
		case *http2.GoAwayFrame:
			w.t.Fatalf("stream %d: GOAWAY %v", id, f.ErrCode)
		case *http2.MetaHeadersFrame:
			if f.StreamID == id && f.PseudoValue("status") != "" {
				status = f.PseudoValue("status")
			}
			if f.StreamID == id && f.StreamEnded() {
				return status, string(b), http2.ErrCodeNo
			}
		case *http2.DataFrame:
			if f.StreamID == id {
				b = append(b, f.Data()...)
				if f.StreamEnded() {
					return status, string(b), http2.ErrCodeNo
				}
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == id {
				return status, string(b), f.ErrCode
			}
		}
	}
}

// seenLog records what a backend received: "METHOD URI host=HOST".
type seenLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *seenLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	l.seen = append(l.seen, r.Method+" "+r.RequestURI+" host="+r.Host)
	l.mu.Unlock()
	io.WriteString(w, "backend")
}

func (l *seenLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.seen
	l.seen = nil
	return s
}

// TestH2MappingThroughProxy: issue 27's attacks on the HTTP/2 to HTTP/1.1
// mapping, through a route table whose admin.example host and /admin/
// paths deny everyone, to an HTTP/1.1 and an h2c backend, over h2c and h2
// over TLS, on every engine and both proxy paths. Before the fix the
// router and allow/deny read :authority while the backend got the client's
// host field (admin.example reached the backend), and a :method holding
// a space put "/admin/x" in the backend's request line; bad :path and
// :authority values were forwarded raw. Now each is a PROTOCOL_ERROR
// reset and the backend receives nothing, and the Host it receives is
// the one the edge routed on.
func TestH2MappingThroughProxy(t *testing.T) {
	for _, kind := range []string{"h1", "h2c"} {
		t.Run(kind, func(t *testing.T) {
			log := &seenLog{}
			uo := UpstreamOptions{Name: "rec"}
			if kind == "h1" {
				uo.Targets = []string{startOrigin(t, log).addr}
			} else {
				uo.Targets, uo.HTTP2 = []string{startH2Origin(t, false, log).addr}, true
			}
			up, err := NewUpstream(uo)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(up.Close)
			px := New(up, Options{})
			denyAll := router.GatePolicy{Rules: access.Rules{Deny: prefixes(t, "0.0.0.0/0", "::/0")}}
			tab, err := router.New([]router.Route{
				{Match: router.Match{Host: "admin.example"}, Handler: router.Gate(px, denyAll)},
				{Match: router.Match{PathPrefix: "/admin/"}, Handler: router.Gate(px, denyAll)},
				{Match: router.Match{PathPrefix: "/"}, Handler: px},
			})
			if err != nil {
				t.Fatal(err)
			}
			h2cAddr, tlsAddr, ca := serveH2Edge(t, router.NewSwitch(tab))
			for _, l := range []struct {
				name, addr string
				ca         *testcert.CA
			}{{"h2c", h2cAddr, nil}, {"tls", tlsAddr, ca}} {
				t.Run(l.name, func(t *testing.T) {
					testH2Mapping(t, dialH2Wire(t, l.addr, l.ca), log)
				})
			}
		})
	}
}

func testH2Mapping(t *testing.T, w *h2wire, log *seenLog) {
	req := func(method, path, authority string, extra ...string) []string {
		f := []string{":method", method, ":scheme", "https", ":path", path, ":authority", authority}
		return append(f, extra...)
	}
	for _, tc := range []struct {
		fields []string
		status string // "" for a PROTOCOL_ERROR reset
		seen   string // what the backend must have received, if anything
	}{
		{req("GET", "/pub", "pub.example"), "200", "GET /pub host=pub.example"},
		{req("GET", "/pub", "pub.example", "host", "PUB.example"), "200", "GET /pub host=pub.example"},
		{[]string{":method", "GET", ":scheme", "https", ":path", "/pub", "host", "pub.example"}, "200", "GET /pub host=pub.example"},
		{req("GET", "/pub", "admin.example"), "403", ""},
		{req("GET", "/admin/x", "pub.example"), "403", ""},
		// The host confusion, both ways round.
		{req("GET", "/pub", "pub.example", "host", "admin.example"), "", ""},
		{req("GET", "/pub", "admin.example", "host", "pub.example"), "", ""},
		// The method smuggling: "GET /admin/x /pub HTTP/1.1".
		{req("GET /admin/x", "/pub", "pub.example"), "", ""},
		{req("GET", "/pub /admin/x", "pub.example"), "", ""},
		{req("GET", "/pub\t/admin/x", "pub.example"), "", ""},
		{req("GET", "/pub#/admin/x", "pub.example"), "", ""},
		{req("GET", "/p\xc3\xbcb", "pub.example"), "", ""},
		{req("GET", "*", "pub.example"), "", ""},
		{req("GET", "http://admin.example/x", "pub.example"), "", ""},
		{req("GET", "/pub", "admin.example@pub.example"), "", ""},
		{req("GET", "/pub", "pub.example/admin/x"), "", ""},
		{req("GET", "/pub", "pub.example?x"), "", ""},
		{req("GET", "/pub", "pub.example#x"), "", ""},
		{req("GET", "/pub", "pub.example\\x"), "", ""},
		{req("GET", "/pub", "pub.example x"), "", ""},
	} {
		status, body, code := w.do(tc.fields...)
		seen := log.take()
		switch {
		case tc.status == "" && (code != http2.ErrCodeProtocol || len(seen) != 0):
			t.Errorf("%q: status %q (%q) reset %v, backend saw %q; want a PROTOCOL_ERROR reset", tc.fields, status, body, code, seen)
		case tc.status != "" && (status != tc.status || code != http2.ErrCodeNo):
			t.Errorf("%q: status %q (%q) reset %v; want %s", tc.fields, status, body, code, tc.status)
		case tc.status != "" && tc.seen == "" && len(seen) != 0:
			t.Errorf("%q: backend saw %q; want nothing", tc.fields, seen)
		case tc.seen != "" && (len(seen) != 1 || seen[0] != tc.seen):
			t.Errorf("%q: backend saw %q; want %q", tc.fields, seen, tc.seen)
		}
	}
}
