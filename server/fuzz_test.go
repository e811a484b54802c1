package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// fuzzStream is a Stream over fixed input, delivered in pieces of step
// bytes, whose output is collected.
type fuzzStream struct {
	in   []byte
	step int
	out  bytes.Buffer
}

func (f *fuzzStream) Read(p []byte) (int, error) {
	if len(f.in) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), f.step, len(f.in))
	copy(p, f.in[:n])
	f.in = f.in[n:]
	return n, nil
}
func (f *fuzzStream) Write(p []byte) (int, error)      { return f.out.Write(p) }
func (f *fuzzStream) Close() error                     { return nil }
func (f *fuzzStream) SetReadDeadline(time.Time) error  { return nil }
func (f *fuzzStream) SetWriteDeadline(time.Time) error { return nil }
func (f *fuzzStream) RemoteAddr() net.Addr             { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }
func (f *fuzzStream) LocalAddr() net.Addr              { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 2} }

var fuzzSeeds = []string{
	"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nHost: x\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;e=1\r\nabc\r\n0\r\nT: 1\r\n\r\nGET / HTTP/1.0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello",
	"HEAD / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
}

// FuzzServeStream runs the connection loop over arbitrary bytes delivered
// in arbitrary pieces: it must end (the input is finite), never panic, and
// write only well-formed responses, each readable by net/http.
func FuzzServeStream(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), uint8(7))
		f.Add([]byte(s), uint8(255))
	}
	// methods records the method of each request handled, so the checker
	// reads each response as the answer to its request (HEAD has no body).
	var methods []string
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		methods = append(methods, string(r.Method()))
		echoBody.ServeEdge(w, r)
	})
	s := New(Options{Handler: h, Limits: Limits{MaxBodyBytes: 1 << 10}})
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		methods = methods[:0]
		st := &fuzzStream{in: in, step: int(step) + 1}
		c := newConn(s, st)
		c.serve(true)
		c.release()
		br := bufio.NewReader(&st.out)
		k := 0
		for n := 0; ; n++ {
			if _, err := br.Peek(1); err == io.EOF {
				break
			}
			method := "GET" // a rejection after the last handled request
			if k < len(methods) {
				method = methods[k]
			}
			resp, err := http.ReadResponse(br, &http.Request{Method: method})
			if err == nil && resp.StatusCode != 100 {
				k++
			}
			if err != nil {
				t.Fatalf("response %d unreadable: %v\ninput %q\noutput %q", n, err, in, st.out.Bytes())
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Fatalf("response %d body: %v", n, err)
			}
		}
	})
}

// FuzzServeMessage runs one message through the message loop.
func FuzzServeMessage(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	s := New(Options{Handler: echoBody, Limits: Limits{MaxBodyBytes: 1 << 10}})
	l := newMemMessages(32)
	f.Fuzz(func(t *testing.T, in []byte) {
		m := l.NewMessage(append([]byte(nil), in...))
		s.serveMessage(m)
		if !m.Released() {
			t.Fatal("message not released")
		}
		out := bytes.Join(m.Replies(), nil)
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(out)), nil)
		if err != nil {
			t.Fatalf("reply unreadable: %v\ninput %q\noutput %q", err, in, out)
		}
		resp.Body.Close()
	})
}
