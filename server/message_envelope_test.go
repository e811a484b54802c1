package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"unsafe"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/parse/json/envelope"
	"github.com/simdedge/simdedge/server/internal/memnet"
)

// envMemMessage is the in-memory transport's message marked as a request
// envelope, as rdma marks one with its envelope flag.
type envMemMessage struct{ *memnet.Message }

func (envMemMessage) Envelope() bool { return true }

var _ EnvelopeMessage = envMemMessage{}

// exchangeEnvelope serves data as an envelope message through the
// in-memory message transport and returns the reply and whether the
// message was released.
func exchangeEnvelope(s *Server, l memMessages, data []byte) (out []byte, released bool) {
	m := l.NewMessage(data)
	s.serveMessage(envMemMessage{m})
	return bytes.Join(m.Replies(), nil), m.Released()
}

// buildEnvelope returns a copy of the envelope of p.
func buildEnvelope(p *envelope.Parts) []byte {
	return append([]byte(nil), envelope.NewBuilder(0).Build(p)...)
}

// hdrs turns "name: value" strings into envelope headers, verbatim (no
// trimming: the envelope may hold any bytes).
func hdrs(fields ...string) []envelope.Header {
	h := make([]envelope.Header, len(fields))
	for i, f := range fields {
		name, value, _ := strings.Cut(f, ": ")
		h[i] = envelope.Header{Name: []byte(name), Value: []byte(value)}
	}
	return h
}

// seen is what envelopeEcho's handler saw of a request.
type seen struct {
	method, target, host string
	version              phttp.Version
	headers              []string
	body                 []byte
	bodyKind             phttp.BodyKind
	contentLength        int64
	bodyInMessage        bool // the body was a view of the message's bytes
}

// envelopeEcho returns a server whose handler records what it saw into
// *got (data is the message being served, for the zero-copy check) and
// answers "ok".
func envelopeEcho(got *seen, data *[]byte, lim Limits) *Server {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		*got = seen{method: string(r.Method()), target: string(r.Target()), host: string(r.Host()),
			version: r.Version(), bodyKind: r.Head().Body, contentLength: r.Head().ContentLength}
		for _, f := range r.Headers() {
			got.headers = append(got.headers, string(f.Name)+": "+string(f.Value))
		}
		b, err := r.BodyBytes()
		if err != nil {
			w.WriteHeader(500)
			return
		}
		got.body = append([]byte(nil), b...)
		if len(b) > 0 {
			p, lo := uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(unsafe.Pointer(unsafe.SliceData(*data)))
			got.bodyInMessage = p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(*data))
		}
		w.WriteString("ok")
	})
	return New(Options{Handler: h, Limits: lim})
}

func statusOf(t *testing.T, out []byte) int {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
	if err != nil {
		t.Fatalf("reply unreadable: %v: %q", err, out)
	}
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// TestEnvelopeMessage: valid envelopes reach the handler with the head the
// envelope states and the body as a view of the message.
func TestEnvelopeMessage(t *testing.T) {
	var got seen
	var data []byte
	s := envelopeEcho(&got, &data, Limits{})
	l := newMemMessages(0)
	for _, tc := range []struct {
		name string
		p    envelope.Parts
		want seen
	}{
		{"get", envelope.Parts{Method: []byte("GET"), Target: []byte("/a?b=c"), Version: 11,
			Headers: hdrs("Host: example.com", "Accept: */*")},
			seen{method: "GET", target: "/a?b=c", host: "example.com", version: phttp.HTTP11,
				headers: []string{"Host: example.com", "Accept: */*"}, bodyKind: phttp.BodyNone, contentLength: -1}},
		{"post with content-length", envelope.Parts{Method: []byte("POST"), Target: []byte("/p"), Version: 11,
			Headers: hdrs("Host: x", "Content-Length: 5"), Body: []byte("hello")},
			seen{method: "POST", target: "/p", host: "x", version: phttp.HTTP11,
				headers: []string{"Host: x", "Content-Length: 5"}, body: []byte("hello"),
				bodyKind: phttp.BodyLength, contentLength: 5, bodyInMessage: true}},
		{"post without content-length", envelope.Parts{Method: []byte("PUT"), Target: []byte("/p"), Version: 11,
			Headers: hdrs("Host: x"), Body: []byte("12345678")},
			seen{method: "PUT", target: "/p", host: "x", version: phttp.HTTP11,
				headers: []string{"Host: x"}, body: []byte("12345678"),
				bodyKind: phttp.BodyLength, contentLength: 8, bodyInMessage: true}},
		{"http/1.0 without host", envelope.Parts{Method: []byte("GET"), Target: []byte("/"), Version: 10},
			seen{method: "GET", target: "/", version: phttp.HTTP10, bodyKind: phttp.BodyNone, contentLength: -1}},
		{"zero content-length", envelope.Parts{Method: []byte("POST"), Target: []byte("/"), Version: 11,
			Headers: hdrs("Host: x", "Content-Length: 0"), Body: []byte{}},
			seen{method: "POST", target: "/", host: "x", version: phttp.HTTP11,
				headers: []string{"Host: x", "Content-Length: 0"}, bodyKind: phttp.BodyLength, contentLength: 0}},
		{"value whitespace trimmed as on the wire", envelope.Parts{Method: []byte("OPTIONS"), Target: []byte("*"), Version: 11,
			Headers: hdrs("Host: x", "X-A: \tv v "), URL: &envelope.URL{Href: []byte("http://x/")}},
			seen{method: "OPTIONS", target: "*", host: "x", version: phttp.HTTP11,
				headers: []string{"Host: x", "X-A: v v"}, bodyKind: phttp.BodyNone, contentLength: -1}},
	} {
		data = buildEnvelope(&tc.p)
		got = seen{}
		out, released := exchangeEnvelope(s, l, data)
		if !released {
			t.Errorf("%s: message not released", tc.name)
		}
		if st := statusOf(t, out); st != 200 {
			t.Errorf("%s: status %d, want 200: %q", tc.name, st, out)
			continue
		}
		if fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tc.want) {
			t.Errorf("%s: handler saw\n%+v\nwant\n%+v", tc.name, got, tc.want)
		}
	}
}

// TestEnvelopeMessageRejects: an envelope is refused whenever the same
// request on the wire would be, and whenever it does not map one to one
// onto an HTTP/1.1 head; never a panic, never the handler.
func TestEnvelopeMessageRejects(t *testing.T) {
	var got seen
	var data []byte
	s := envelopeEcho(&got, &data, Limits{MaxBodyBytes: 64, MaxHeaders: 8, MaxHeaderBytes: 1024})
	l := newMemMessages(0)
	get := func(f func(p *envelope.Parts)) []byte {
		p := envelope.Parts{Method: []byte("GET"), Target: []byte("/"), Version: 11, Headers: hdrs("Host: x")}
		f(&p)
		return buildEnvelope(&p)
	}
	valid := get(func(*envelope.Parts) {})
	many := make([]string, 9)
	for i := range many {
		many[i] = fmt.Sprintf("X-%d: v", i)
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		status int
	}{
		{"empty message", nil, 400},
		{"http bytes", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 400},
		{"truncated envelope", valid[:len(valid)-4], 400},
		{"wrong identifier", append(append([]byte(nil), valid[:4]...), append([]byte("XXXX"), valid[8:]...)...), 400},
		{"garbage root offset", append([]byte{0xff, 0xff, 0xff, 0x7f}, valid[4:]...), 400},
		{"no method", get(func(p *envelope.Parts) { p.Method = nil }), 400},
		{"method not a token", get(func(p *envelope.Parts) { p.Method = []byte("G(T") }), 400},
		{"space in method", get(func(p *envelope.Parts) { p.Method = []byte("GET /x") }), 400},
		{"no target", get(func(p *envelope.Parts) { p.Target = nil }), 400},
		{"space in target", get(func(p *envelope.Parts) { p.Target = []byte("/a HTTP/1.1\r\nX: y") }), 400},
		{"control byte in target", get(func(p *envelope.Parts) { p.Target = []byte("/a\x01") }), 400},
		{"asterisk target for GET", get(func(p *envelope.Parts) { p.Target = []byte("*") }), 400},
		{"version 2.0", get(func(p *envelope.Parts) { p.Version = 20 }), 505},
		{"version 0", get(func(p *envelope.Parts) { p.Version = 0 }), 505},
		{"version unwritable", get(func(p *envelope.Parts) { p.Version = 200 }), 400},
		{"missing host", get(func(p *envelope.Parts) { p.Headers = nil }), 400},
		{"two hosts", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x", "Host: y") }), 400},
		{"invalid host", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: a b") }), 400},
		{"crlf in value", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x\r\nTransfer-Encoding: chunked") }), 400},
		{"lf in value", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x", "A: b\nC: d") }), 400},
		{"colon in name", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x", "A:B: c") }), 400},
		{"cr in name", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x", "A\rB: c") }), 400},
		{"empty name", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x", ": c") }), 400},
		{"space before colon", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x", "A : c") }), 400},
		{"nul in value", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x", "A: b\x00") }), 400},
		{"transfer-encoding chunked", get(func(p *envelope.Parts) {
			p.Method, p.Headers, p.Body = []byte("POST"), hdrs("Host: x", "Transfer-Encoding: chunked"), []byte("0\r\n\r\n")
		}), 400},
		{"content-length too large for the body", get(func(p *envelope.Parts) {
			p.Method, p.Headers, p.Body = []byte("POST"), hdrs("Host: x", "Content-Length: 6"), []byte("hello")
		}), 400},
		{"content-length too small for the body", get(func(p *envelope.Parts) {
			p.Method, p.Headers, p.Body = []byte("POST"), hdrs("Host: x", "Content-Length: 4"), []byte("hello")
		}), 400},
		{"content-length without a body", get(func(p *envelope.Parts) {
			p.Headers = hdrs("Host: x", "Content-Length: 3")
		}), 400},
		{"invalid content-length", get(func(p *envelope.Parts) {
			p.Method, p.Headers, p.Body = []byte("POST"), hdrs("Host: x", "Content-Length: +5"), []byte("hello")
		}), 400},
		{"body over the limit", get(func(p *envelope.Parts) { p.Method, p.Body = []byte("POST"), make([]byte, 65) }), 413},
		{"too many headers", get(func(p *envelope.Parts) { p.Headers = hdrs(append([]string{"Host: x"}, many...)...) }), 431},
		{"head over the limit", get(func(p *envelope.Parts) { p.Headers = hdrs("Host: x", "A: "+strings.Repeat("v", 1024)) }), 431},
		{"target over the limit", get(func(p *envelope.Parts) { p.Target = []byte("/" + strings.Repeat("v", 1024)) }), 414},
	} {
		// A copy: simdedgedebug builds poison a served message.
		data = append([]byte(nil), tc.data...)
		got = seen{method: "(handler did not run)"}
		out, released := exchangeEnvelope(s, l, data)
		if !released {
			t.Errorf("%s: message not released", tc.name)
		}
		if st := statusOf(t, out); st != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, st, tc.status)
		}
		if got.method != "(handler did not run)" {
			t.Errorf("%s: the handler ran: %+v", tc.name, got)
		}
	}
	// The same bytes not marked as an envelope are HTTP/1.1: an envelope
	// is not HTTP, and HTTP is not an envelope.
	m := l.NewMessage(append([]byte(nil), valid...))
	s.serveMessage(m)
	if st := statusOf(t, bytes.Join(m.Replies(), nil)); st != 400 {
		t.Errorf("an envelope not marked as one: status %d, want 400", st)
	}
}

// nopMessage is a Message that discards its replies, so that allocation
// counts see only the server's.
type nopMessage struct {
	data     []byte
	envelope bool
	replies  int
	ok       bool // the first reply was a 200
}

func (m *nopMessage) Data() []byte { return m.data }
func (m *nopMessage) RemoteAddr() net.Addr {
	return memnet.Addr("nop")
}
func (m *nopMessage) Reply(b []byte, more bool) error {
	if m.replies == 0 {
		m.ok = bytes.HasPrefix(b, []byte("HTTP/1.1 200 "))
	}
	m.replies++
	return nil
}
func (m *nopMessage) MaxReply() int  { return 0 }
func (m *nopMessage) Release()       {}
func (m *nopMessage) Envelope() bool { return m.envelope }

// TestEnvelopeMessageAllocs: a warm server serves an envelope message, and
// an HTTP/1.1 one, without allocating.
func TestEnvelopeMessageAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		b, _ := r.BodyBytes()
		if len(b) != 5 {
			w.WriteHeader(500)
		}
		w.WriteString("ok")
	})
	s := New(Options{Handler: h})
	env := buildEnvelope(&envelope.Parts{Method: []byte("POST"), Target: []byte("/a"), Version: 11,
		Headers: hdrs("Host: x", "Content-Length: 5", "Accept: */*"), Body: []byte("hello")})
	wire := []byte("POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nAccept: */*\r\n\r\nhello")
	for _, m := range []*nopMessage{{data: env, envelope: true}, {data: wire}} {
		// Each round serves the original bytes: simdedgedebug builds
		// poison a served message.
		orig := append([]byte(nil), m.data...)
		s.serveMessage(m) // warm the pools
		if !m.ok {
			t.Fatalf("envelope %v: not answered 200", m.envelope)
		}
		if n := testing.AllocsPerRun(200, func() {
			copy(m.data, orig)
			m.replies = 0
			s.serveMessage(m)
			if !m.ok {
				t.Fatalf("envelope %v: not answered 200", m.envelope)
			}
		}); n != 0 {
			t.Errorf("envelope %v: %v allocations per message, want 0", m.envelope, n)
		}
	}
}
