package server

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/simdedge/simdedge/internal/h3test"
	phttp "github.com/simdedge/simdedge/parse/http"
)

// h3FakeStream is a request stream's receive side over fixed bytes.
type h3FakeStream struct {
	r         *bytes.Reader
	cancelled bool
}

func (f *h3FakeStream) Read(p []byte) (int, error) {
	if f.cancelled {
		return 0, &quic.StreamError{ErrorCode: h3MessageError}
	}
	return f.r.Read(p)
}
func (f *h3FakeStream) SetReadDeadline(time.Time) error { return nil }
func (f *h3FakeStream) CancelRead(quic.StreamErrorCode) { f.cancelled = true }

// FuzzH3RequestStream runs a request stream's bytes (frames) through the
// HTTP/3 request mapping as the server does (h3stream.readHead, then the
// body reader): whatever the bytes, it ends without a panic; a head it
// accepts is one an HTTP/1.1 client could have sent (its HTTP/1.1
// rendering parses back to the same method, target and Host); the body
// reads to exactly the DATA payloads sent, and to the Content-Length when
// one was declared and the body ended cleanly.
func FuzzH3RequestStream(f *testing.F) {
	get := h3test.Get("GET", "/a/../b?q")
	f.Add(h3test.Headers(get...))
	f.Add(append(h3test.Headers(":method", "POST", ":scheme", "https", ":authority", "a", ":path", "/", "content-length", "3"), h3test.Data([]byte("abc"))...))
	f.Add(append(append(h3test.Headers(":method", "POST", ":scheme", "https", ":path", "/", "host", "h"), h3test.Data([]byte("ab"))...), h3test.Headers("x-trailer", "1")...))
	f.Add(append([]byte{0x21, 0x02, 'x', 'y'}, h3test.Headers(get...)...)) // a reserved frame type first
	f.Add(append(h3test.Headers(get...), h3test.Data(nil)...))
	f.Add(append(h3test.Headers(append(get, "cookie", "a=1", "cookie", "b=2")...), 0x00))
	f.Add(h3test.Headers(":method", "CONNECT", ":authority", "a:443"))
	f.Add([]byte{0x01, 0x40})
	srv := New(Options{Handler: okHandler("")})
	c := &conn{srv: srv, cfg: srv.settings()}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 64<<10 {
			return
		}
		hc := &h3conn{srv: srv, c: c, o: &HTTP3Options{MaxHeaderBytes: 4 << 10}}
		s := &h3stream{hc: hc}
		s.req.body.h3 = s
		s.req.srv, s.req.c = srv, c
		fs := &h3FakeStream{r: bytes.NewReader(b)}
		s.rs = fs
		s.fr.reset(fs)
		s.resetState()
		if _, err := s.readHead(); err != nil || s.hd.tooBig {
			return
		}
		h := &s.req.head
		connect := string(h.Method) == "CONNECT"
		if !h2CheckLine(h.Method, h.Target, connect) {
			t.Fatalf("accepted a request line HTTP/1.1 refuses: %q %q", h.Method, h.Target)
		}
		if h.Host != nil {
			raw := s.req.h2Raw()
			var back phttp.Request
			n, err := phttp.ParseRequest(raw, &back)
			if err != nil || n != len(raw) || !bytes.Equal(back.Method, h.Method) || !bytes.Equal(back.Target, h.Target) || !bytes.Equal(back.Host, h.Host) {
				t.Fatalf("mapped head %q does not read back as HTTP/1.1: %v", raw, err)
			}
		}
		s.req.body.reset(h.Body, h.ContentLength, 0, 0)
		s.req.body.c = nil
		got, err := io.Copy(io.Discard, &s.req.body)
		if h.Body == phttp.BodyNone && got != 0 {
			t.Fatalf("a request without a body read %d bytes", got)
		}
		if err == nil && s.declLen >= 0 && got != s.declLen {
			t.Fatalf("body of %d bytes ended cleanly, Content-Length %d", got, s.declLen)
		}
		if got != s.got {
			t.Fatalf("read %d body bytes, counted %d", got, s.got)
		}
	})
}
