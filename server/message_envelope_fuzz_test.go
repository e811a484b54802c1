package server

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/parse/json/envelope"
	"github.com/simdedge/simdedge/server/pathnorm"
)

// envelopeFuzzServer answers with what the handler saw, one field a line:
// method, target, each header, then the body.
func envelopeFuzzServer() *Server {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		b, err := r.BodyBytes()
		if err != nil {
			w.WriteHeader(500)
			return
		}
		w.Write(r.Method())
		w.WriteString("\n")
		w.Write(r.Target())
		w.WriteString("\n")
		for _, f := range r.Headers() {
			w.Write(f.Name)
			w.WriteString(": ")
			w.Write(f.Value)
			w.WriteString("\n")
		}
		w.Write(b)
	})
	return New(Options{Handler: h, Limits: Limits{MaxBodyBytes: 1 << 10, MaxHeaders: 16, MaxHeaderBytes: 2048}})
}

// readReply reads the one response of an exchange: it must be well formed.
func readReply(t *testing.T, out []byte) (int, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
	if err != nil {
		t.Fatalf("reply unreadable: %v\noutput %q", err, out)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reply body: %v", err)
	}
	return resp.StatusCode, b
}

var envelopeFuzzSeeds = []envelope.Parts{
	{Method: []byte("GET"), Target: []byte("/"), Version: 11, Headers: hdrs("Host: x")},
	{Method: []byte("POST"), Target: []byte("/p?q"), Version: 11, Headers: hdrs("Host: x", "Content-Length: 3"), Body: []byte("abc")},
	{Method: []byte("PUT"), Target: []byte("http://x/a"), Version: 11, Headers: hdrs("Host: x", "A: b"), Body: []byte("abc"),
		URL: &envelope.URL{Href: []byte("http://x/a"), Scheme: []byte("http"), Host: []byte("x"), Path: []byte("/a")}},
	{Method: []byte("GET"), Target: []byte("/"), Version: 10},
	{Method: []byte("POST"), Target: []byte("/"), Version: 11, Headers: hdrs("Host: x", "Transfer-Encoding: chunked"), Body: []byte("0\r\n\r\n")},
}

// FuzzServeEnvelope serves arbitrary bytes as an envelope message through
// the in-memory message transport: never a panic, the message is always
// released, the reply is one well-formed response, and a 200 means the
// bytes were a valid envelope whose fields the handler saw exactly.
func FuzzServeEnvelope(f *testing.F) {
	for i := range envelopeFuzzSeeds {
		f.Add(buildEnvelope(&envelopeFuzzSeeds[i]))
	}
	f.Add([]byte{})
	f.Add([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	s := envelopeFuzzServer()
	l := newMemMessages(64)
	f.Fuzz(func(t *testing.T, in []byte) {
		// The handler's view of the message is compared with what Read
		// makes of a copy: the server may not change the bytes.
		orig := append([]byte(nil), in...)
		out, released := exchangeEnvelope(s, l, in)
		if !released {
			t.Fatal("message not released")
		}
		status, body := readReply(t, out)
		if status != 200 {
			return
		}
		v, err := envelope.Read(orig)
		if err != nil {
			t.Fatalf("answered 200 for an envelope that does not verify: %v", err)
		}
		if want := handlerView(&v); !bytes.Equal(body, want) {
			t.Fatalf("handler saw\n%q\nthe envelope holds\n%q", body, want)
		}
	})
}

// FuzzServeEnvelopeFields builds envelopes from arbitrary field bytes, so
// that the fuzzer reaches the HTTP rules behind the verifier: every field
// that holds a delimiter or breaks a rule gets a 4xx/5xx; a 200 means the
// handler saw the fields as given (values trimmed of surrounding
// whitespace, as on the wire).
func FuzzServeEnvelopeFields(f *testing.F) {
	for _, p := range envelopeFuzzSeeds {
		var name, value []byte
		if len(p.Headers) > 1 {
			name, value = p.Headers[1].Name, p.Headers[1].Value
		}
		f.Add(p.Method, p.Target, p.Version, name, value, p.Body, len(p.Headers) > 0)
	}
	s := envelopeFuzzServer()
	l := newMemMessages(0)
	b := envelope.NewBuilder(0)
	f.Fuzz(func(t *testing.T, method, target []byte, version uint8, name, value, body []byte, host bool) {
		p := envelope.Parts{Method: method, Target: target, Version: version, Body: body}
		if host {
			p.Headers = append(p.Headers, envelope.Header{Name: []byte("Host"), Value: []byte("x")})
		}
		if name != nil {
			p.Headers = append(p.Headers, envelope.Header{Name: name, Value: value})
		}
		data := append([]byte(nil), b.Build(&p)...)
		out, released := exchangeEnvelope(s, l, data)
		if !released {
			t.Fatal("message not released")
		}
		status, got := readReply(t, out)
		if status < 200 || status >= 600 || status > 200 && status < 400 {
			t.Fatalf("status %d", status)
		}
		if status != 200 {
			return
		}
		for _, field := range [][]byte{method, target, name, value} {
			if bytes.ContainsAny(field, "\r\n") {
				t.Fatalf("a field with CR or LF was served: %q", field)
			}
		}
		v, err := envelope.Read(b.Build(&p))
		if err != nil {
			t.Fatal(err)
		}
		if want := handlerView(&v); !bytes.Equal(got, want) {
			t.Fatalf("handler saw\n%q\nthe envelope holds\n%q", got, want)
		}
	})
}

// handlerView is what envelopeFuzzServer's handler answers for a served
// envelope: its fields, values trimmed of optional whitespace (RFC 9110
// §5.5, as the parser does for a request on the wire), and the target in
// its normal form (the server's default path options, as for a request on
// the wire: "/." reaches the handler as "/").
func handlerView(v *envelope.View) []byte {
	var b []byte
	b = append(append(b, v.Method()...), '\n')
	target, _, err := pathnorm.Target(nil, v.Target(), &pathnorm.Options{})
	if err != nil {
		target = v.Target()
	}
	b = append(append(b, target...), '\n')
	for i := range v.NumHeaders() {
		name, value := v.Header(i)
		b = append(append(b, name...), ": "...)
		b = append(append(b, strings.Trim(string(value), " \t")...), '\n')
	}
	return append(b, v.Body()...)
}
