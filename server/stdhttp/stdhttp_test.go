package stdhttp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
)

func TestRequestAndResponse(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Path", r.URL.Path)
		w.Header().Set("X-Query", r.URL.Query().Get("q"))
		w.Header().Set("X-Agent", r.Header.Get("User-Agent"))
		w.Header().Set("X-Proto", r.Proto)
		w.WriteHeader(201)
		w.Write([]byte(r.Method + " " + r.Host + " " + string(b)))
	})
	addr := serve(t, h, server.Options{})
	for _, h2c := range []bool{false, true} {
		req, _ := http.NewRequest("PUT", "http://"+addr+"/p/a?q=1", strings.NewReader("body"))
		req.Header.Set("User-Agent", "ua")
		resp, err := client(t, h2c).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b := readAll(t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 || b != "PUT "+addr+" body" || resp.Header.Get("X-Path") != "/p/a" ||
			resp.Header.Get("X-Query") != "1" || resp.Header.Get("X-Agent") != "ua" || resp.Header.Get("X-Proto") != resp.Proto {
			t.Errorf("h2c=%v: got %d %q %v", h2c, resp.StatusCode, b, resp.Header)
		}
	}
}

// waitForCancel is a handler that reads the body, says it runs on
// started, and reports on result whether its context was cancelled
// (rather than its own bound running out).
func waitForCancel(started chan<- struct{}, result chan<- error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		started <- struct{}{}
		select {
		case <-r.Context().Done():
			result <- r.Context().Err()
		case <-time.After(testTimeout):
			result <- errors.New("the context was not cancelled")
		}
	})
}

// TestContextCancelledWhenClientCloses: an HTTP/1.1 client that closes
// its connection while the handler runs cancels the request's context,
// for a request without a body and for one whose body the handler read.
func TestContextCancelledWhenClientCloses(t *testing.T) {
	started, result := make(chan struct{}, 1), make(chan error, 1)
	h := waitForCancel(started, result)
	addr := serve(t, h, server.Options{})
	tlsAddr, cfg := serveTLS(t, h)
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	} {
		for _, overTLS := range []bool{false, true} {
			var c net.Conn
			if overTLS {
				c, _ = dial(t, tlsAddr, cfg)
			} else {
				c, _ = dial(t, addr)
			}
			io.WriteString(c, req)
			wait(t, started, "the handler")
			c.Close()
			if err := wait(t, result, "the handler's end"); !errors.Is(err, context.Canceled) {
				t.Errorf("%q (TLS %v): %v", req, overTLS, err)
			}
		}
	}
}

// TestContextCancelledWhenStreamReset: an HTTP/2 client that cancels its
// request (RST_STREAM) cancels the handler's context.
func TestContextCancelledWhenStreamReset(t *testing.T) {
	started, result := make(chan struct{}, 1), make(chan error, 1)
	addr := serve(t, waitForCancel(started, result), server.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/", nil)
	done := make(chan error, 1)
	go func() {
		resp, err := client(t, true).Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	wait(t, started, "the handler")
	cancel()
	if err := wait(t, result, "the handler's end"); !errors.Is(err, context.Canceled) {
		t.Error(err)
	}
	wait(t, done, "the client")
}

// TestContextKeepsPipelinedRequest: the watch of the client reads the
// next pipelined request's first byte; that request is still served.
func TestContextKeepsPipelinedRequest(t *testing.T) {
	release := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			wait(t, release, "the second request to be sent")
		}
		if r.Context().Err() != nil {
			w.WriteHeader(500)
		}
		io.WriteString(w, r.Method+" "+r.URL.Path)
	})
	addr := serve(t, h, server.Options{})
	c, br := dial(t, addr)
	io.WriteString(c, "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
	// Sent in two writes, so that the watch may well take the first
	// byte alone.
	time.Sleep(50 * time.Millisecond)
	io.WriteString(c, "G")
	time.Sleep(50 * time.Millisecond)
	io.WriteString(c, "ET /next HTTP/1.1\r\nHost: x\r\n\r\n")
	close(release)
	for _, want := range []string{"GET /slow", "GET /next"} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b := readAll(t, resp.Body); resp.StatusCode != 200 || b != want {
			t.Errorf("got %d %q, want 200 %q", resp.StatusCode, b, want)
		}
	}
}

// TestFlush: a streaming handler's first chunk reaches the client before
// the handler returns, on HTTP/1.1 and HTTP/2.
func TestFlush(t *testing.T) {
	for _, h2c := range []bool{false, true} {
		t.Run(fmt.Sprintf("h2c=%v", h2c), func(t *testing.T) {
			seen := make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.WriteString(w, "first\n")
				w.(http.Flusher).Flush()
				select {
				case <-seen:
					io.WriteString(w, "second\n")
				case <-time.After(testTimeout):
					io.WriteString(w, "the first chunk was not flushed\n")
				}
			})
			addr := serve(t, h, server.Options{})
			resp, err := client(t, h2c).Get("http://" + addr + "/")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			if line, err := br.ReadString('\n'); err != nil || line != "first\n" {
				t.Fatalf("first chunk %q, %v", line, err)
			}
			close(seen)
			if rest := readAll(t, br); rest != "second\n" {
				t.Errorf("then %q", rest)
			}
		})
	}
}

// TestHijack: a handler hijacks the HTTP/1.1 connection, answers 101
// itself and echoes lines; the bytes the client sent right behind the
// request head reach it through the hijacked reader.
func TestHijack(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			io.WriteString(w, "first")
			return
		}
		conn, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		// The 101 goes out before the handler returns: after the
		// responses to earlier requests, which Hijack wrote.
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		go func() { // the connection outlives the handler, as with net/http
			defer conn.Close()
			for i := 0; i < 3; i++ {
				line, err := brw.ReadString('\n')
				if err != nil {
					return
				}
				brw.WriteString("echo " + line)
				brw.Flush()
			}
		}()
	})
	addr := serve(t, h, server.Options{})
	tlsAddr, cfg := serveTLS(t, h)
	// Plain with an Upgrade, plain without, TLS, and plain behind a
	// pipelined request, whose response must come out first.
	for i, upgrade := range []string{"Connection: Upgrade\r\nUpgrade: echo\r\n", "", "", ""} {
		var c net.Conn
		var br *bufio.Reader
		if i == 2 {
			c, br = dial(t, tlsAddr, cfg)
		} else {
			c, br = dial(t, addr)
		}
		first := ""
		if i == 3 {
			first = "GET /first HTTP/1.1\r\nHost: x\r\n\r\n"
		}
		io.WriteString(c, first+"GET /echo HTTP/1.1\r\nHost: x\r\n"+upgrade+"\r\nearly\n")
		if first != "" {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatal(err)
			}
			if b := readAll(t, resp.Body); b != "first" {
				t.Fatalf("pipelined response %q", b)
			}
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 101 {
			t.Fatalf("%v %v", resp, err)
		}
		if line, err := br.ReadString('\n'); err != nil || line != "echo early\n" {
			t.Fatalf("got %q, %v", line, err)
		}
		io.WriteString(c, "late\n")
		if line, err := br.ReadString('\n'); err != nil || line != "echo late\n" {
			t.Fatalf("got %q, %v", line, err)
		}
	}
}

// TestNoHijackOverHTTP2: an HTTP/2 response writer is no Hijacker, as
// with net/http.
func TestNoHijackOverHTTP2(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, ok := w.(http.Hijacker)
		fmt.Fprint(w, ok)
	})
	addr := serve(t, h, server.Options{})
	resp, err := client(t, true).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b := readAll(t, resp.Body); resp.ProtoMajor != 2 || b != "false" {
		t.Errorf("%s: Hijacker %s", resp.Proto, b)
	}
}

// TestChunkedTooLarge: a chunked body over MaxBodyBytes is answered 413
// and the connection closes, although the net/http handler answers the
// read error with a 500 of its own.
func TestChunkedTooLarge(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, "cannot read", http.StatusInternalServerError)
		}
	})
	addr := serve(t, h, server.Options{Limits: server.Limits{MaxBodyBytes: 10}})
	c, br := dial(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp.Body)
	if resp.StatusCode != 413 || !resp.Close {
		t.Fatalf("got %d close=%v, want 413 and close", resp.StatusCode, resp.Close)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Errorf("connection not closed: %v", err)
	}
}
