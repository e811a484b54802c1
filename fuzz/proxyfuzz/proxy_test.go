package proxyfuzz

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/proxy"
	"github.com/simdedge/simdedge/server/servertest"
)

// acceptedHeads is the model: how many request heads parse/http's strict
// defaults accept, in order, from the client's bytes, stopping at the first
// rejected head, a body that does not complete, or Connection: close. The
// proxy may forward at most that many (it streams a head before its body
// is complete, so the last one may have an unfinished body).
func acceptedHeads(in []byte) int {
	buf := append([]byte(nil), in...) // chunked decoding works in place
	count := 0
	var req http.Request
	for {
		n, err := http.ParseRequest(buf, &req)
		if err != nil {
			return count
		}
		count++
		buf = buf[n:]
		switch req.Body {
		case http.BodyLength:
			if int64(len(buf)) < req.ContentLength {
				return count
			}
			buf = buf[req.ContentLength:]
		case http.BodyChunked:
			var d http.ChunkedDecoder
			_, consumed, err := d.Decode(buf)
			if err != nil {
				return count
			}
			buf = buf[consumed:]
		}
		if req.Close {
			return count
		}
	}
}

var seeds = []string{
	"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET /a HTTP/1.1\r\nHost: a\r\n\r\nGET /b HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: a\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	// Smuggling shapes that must never reach the upstream.
	"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /x HTTP/1.1\r\nHost: a\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
	"GET / HTTP/1.1\r\nHost: a\r\n X: folded\r\n\r\n",
	"GET / HTTP/1.1\nHost: a\n\n",
	"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: a\r\nX : y\r\n\r\n",
}

// FuzzProxyForwardsOnlyStrict sends arbitrary bytes to the edge proxy over
// the in-memory stream transport and checks at a strict upstream that
// everything forwarded parses strictly, that no more requests arrive than
// the client's bytes hold strictly valid heads, and that no server or proxy
// goroutine outlives the server's shutdown.
func FuzzProxyForwardsOnlyStrict(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	up := startUpstream(f)
	pool, err := proxy.NewUpstream(proxy.UpstreamOptions{
		Name: "fuzz", Targets: []string{up.ln.Addr().String()},
		ConnectTimeout: time.Second, ResponseHeaderTimeout: 2 * time.Second,
	})
	if err != nil {
		f.Fatal(err)
	}
	handler := proxy.New(pool, proxy.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})

	f.Fuzz(func(t *testing.T, in []byte) {
		up.take()
		s := server.New(server.Options{
			Handler:  handler,
			Timeouts: server.Timeouts{ReadHeader: 200 * time.Millisecond, Idle: 200 * time.Millisecond},
			Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
		l := servertest.NewStreamListener()
		served := make(chan error, 1)
		go func() { served <- s.ServeStream(l) }()
		c, err := l.Dial()
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		drained := make(chan struct{})
		go func() {
			io.Copy(io.Discard, c) // responses; the pipe is synchronous
			close(drained)
		}()
		c.Write(in) // the server may close early; that is fine
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = s.Shutdown(ctx)
		cancel()
		c.Close()
		<-drained
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("shutdown: %v", err)
		}
		if err := <-served; err != nil && !errors.Is(err, server.ErrServerClosed) {
			t.Logf("serve: %v", err)
		}
		if leaked := leakedServerGoroutines(2 * time.Second); leaked != nil {
			t.Fatalf("input %q: server goroutines left after shutdown:\n%s", in, leaked)
		}
		heads, bad := up.take()
		for _, b := range bad {
			t.Errorf("input %q: %s", in, b)
		}
		if max := acceptedHeads(in); heads > int64(max) {
			t.Fatalf("input %q: upstream received %d requests, strict parsing accepts only %d", in, heads, max)
		}
	})
}
