package server

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
)

func serveMem(t *testing.T, h Handler, o Options) (memStreams, memMessages) {
	t.Helper()
	testenv.CheckGoroutines(t)
	o.Handler = h
	s := New(o)
	sl := newMemStreams()
	ml := newMemMessages(64)
	done := make(chan error, 2)
	go func() { done <- s.ServeStream(sl) }()
	go func() { done <- s.ServeMessages(ml) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
		for range 2 {
			if err := <-done; err != ErrServerClosed {
				t.Errorf("Serve returned %v", err)
			}
		}
	})
	return sl, ml
}

// TestOneHandlerBothTransports runs the same handler over the in-memory
// stream and message transports and checks they answer alike.
func TestOneHandlerBothTransports(t *testing.T) {
	sl, ml := serveMem(t, echoBody, Options{})
	reqs := []string{
		"GET /a HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nxyz",
		"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n",
	}
	want := []string{"GET /a 0:", "POST /b 3:xyz", "POST /c 3:abc"}

	c, err := sl.Dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go io.WriteString(c, strings.Join(reqs, "")) // net.Pipe is synchronous
	br := bufio.NewReader(c)
	for i := range reqs {
		_, body := readResponse(t, br, "GET")
		if body != want[i] {
			t.Errorf("stream %d: %q, want %q", i, body, want[i])
		}
	}

	for i, r := range reqs {
		replies, err := ml.Exchange([]byte(r))
		if err != nil {
			t.Fatal(err)
		}
		if len(replies) < 2 {
			t.Errorf("message %d: %d replies, want a split reply (MaxReply 64)", i, len(replies))
		}
		for _, m := range replies {
			if len(m) > 64 {
				t.Errorf("reply of %d bytes exceeds MaxReply", len(m))
			}
		}
		resp, body := readResponse(t, bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), "GET")
		if body != want[i] || resp.StatusCode != 200 {
			t.Errorf("message %d: %d %q, want %q", i, resp.StatusCode, body, want[i])
		}
	}
	// Rejections over messages.
	for _, tc := range []struct {
		req    string
		status int
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n", 400},                             // truncated head
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\nab", 413}, // body not whole
		{"GET / HTTP/3.0\r\nHost: x\r\n\r\n", 505},
	} {
		replies, _ := ml.Exchange([]byte(tc.req))
		resp, _ := readResponse(t, bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), "GET")
		if resp.StatusCode != tc.status {
			t.Errorf("%q: status %d, want %d", tc.req, resp.StatusCode, tc.status)
		}
	}
}

func TestRequestURLAndJSON(t *testing.T) {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		u, err := r.URL()
		if err != nil {
			w.WriteHeader(400)
			return
		}
		doc, err := r.JSON()
		if err != nil {
			w.WriteHeader(422)
			return
		}
		v, err := doc.Root().Get("n")
		if err != nil {
			w.WriteHeader(422)
			return
		}
		n, _ := v.Int()
		w.WriteString(u.Hostname() + "|" + u.Pathname() + "|" + u.Search() + "|")
		w.Write([]byte{byte('0' + n)})
	})
	_, addr := startTCP(t, h, Options{})
	c := newClient()
	closeIdle(t, c)
	resp, err := c.Post("http://"+addr+"/a/./b/../c?x=1", "application/json", strings.NewReader(`{"n": 7}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "127.0.0.1|/a/c|?x=1|7" {
		t.Errorf("got %d %q", resp.StatusCode, b)
	}
	resp, err = c.Post("http://"+addr+"/", "application/json", strings.NewReader(`{"n": `))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 422 {
		t.Errorf("bad JSON: status %d", resp.StatusCode)
	}
}

func TestCurl(t *testing.T) {
	curl := testenv.Command(t, "curl")
	_, addr := startTCP(t, echoBody, Options{})
	out, err := runCmd(curl, "-sS", "--max-time", "10", "-H", "Expect:", "--data-binary", "hello curl", "http://"+addr+"/c", "http://"+addr+"/d")
	if err != nil {
		t.Fatalf("curl: %v\n%s", err, out)
	}
	if want := "POST /c 10:hello curlPOST /d 10:hello curl"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
	// Chunked upload with Expect: 100-continue, as curl sends it.
	out, err = runCmd(curl, "-sS", "--max-time", "10", "-H", "Transfer-Encoding: chunked", "--data-binary", "xyz", "http://"+addr+"/e")
	if err != nil || out != "POST /e 3:xyz" {
		t.Errorf("curl chunked: %q %v", out, err)
	}
}

func TestRequestClone(t *testing.T) {
	kept := make(chan *Request, 1)
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if _, err := r.BodyBytes(); err != nil {
			t.Error(err)
		}
		kept <- r.Clone()
		w.WriteString("ok")
	})
	_, addr := startTCP(t, h, Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	io.WriteString(c, "POST /first HTTP/1.1\r\nHost: a\r\nX-K: v1\r\nContent-Length: 3\r\n\r\nabc")
	readResponse(t, br, "POST")
	clone := <-kept
	// The next request reuses (and, with simdedgedebug, poisons) the
	// connection's buffer; the clone must not change.
	io.WriteString(c, "POST /second HTTP/1.1\r\nHost: b\r\nX-K: v2\r\nContent-Length: 3\r\n\r\nxyz")
	readResponse(t, br, "POST")
	<-kept
	v, _ := clone.Header("X-K")
	body, _ := clone.BodyBytes()
	if string(clone.Target()) != "/first" || string(clone.Host()) != "a" || string(v) != "v1" || string(body) != "abc" {
		t.Errorf("clone changed: %s %s %s %q", clone.Target(), clone.Host(), v, body)
	}
	if b, _ := io.ReadAll(clone.Body()); string(b) != "abc" {
		t.Errorf("clone body reader: %q", b)
	}
}
