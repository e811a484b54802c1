package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/servertest"
)

// memTarget is the test double of a message target: a simdedge server
// behind an in-memory message listener, whose replies it hands to the
// proxy piece by piece as a real message transport would.
type memTarget struct {
	l      *servertest.MessageListener
	closed atomic.Int32
}

func newMemTarget(t *testing.T, max int, h server.Handler) *memTarget {
	t.Helper()
	l := servertest.NewMessageListener(max)
	s := server.New(server.Options{Handler: h})
	go s.ServeMessages(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
	})
	return &memTarget{l: l}
}

func (m *memTarget) RoundTrip(req []byte, timeout time.Duration, part func([]byte, bool) error) error {
	// The server parses (and may rewrite) the message in place: give it
	// its own buffer, as a transport's receive buffer would be.
	replies, err := m.l.Exchange(append([]byte(nil), req...))
	if err != nil {
		return err
	}
	for i, r := range replies {
		if err := part(r, i < len(replies)-1); err != nil {
			return err
		}
	}
	return nil
}

func (m *memTarget) Close() error { m.closed.Add(1); return nil }

// scriptTarget answers every request with fixed pieces, then err.
type scriptTarget struct {
	pieces []string
	err    error
	last   []byte // the last request received
}

type timeoutErr struct{}

func (timeoutErr) Error() string { return "test: timed out" }
func (timeoutErr) Timeout() bool { return true }

func (s *scriptTarget) RoundTrip(req []byte, timeout time.Duration, part func([]byte, bool) error) error {
	s.last = append(s.last[:0], req...)
	for i, p := range s.pieces {
		if err := part([]byte(p), i < len(s.pieces)-1 || s.err != nil); err != nil {
			return err
		}
	}
	return s.err
}

func (s *scriptTarget) Close() error { return nil }

func startMessageProxy(t *testing.T, mt MessageTarget) string {
	t.Helper()
	addr, _ := startProxy(t, UpstreamOptions{Name: "msg", Targets: []string{"backend:7471"}, MessageTargets: []MessageTarget{mt}}, server.Options{})
	return addr
}

func TestMessageTargetExchanges(t *testing.T) {
	testenv.CheckGoroutines(t)
	big := strings.Repeat("0123456789abcdef", 20000) // 320 KB, many pieces
	h := server.HandlerFunc(func(w *server.ResponseWriter, r *server.Request) {
		body, err := r.BodyBytes()
		if err != nil {
			w.WriteHeader(400)
			return
		}
		w.AddHeader("X-Method", string(r.Method()))
		xff, _ := r.Header("X-Forwarded-For")
		w.AddHeader("X-Forwarded", string(xff))
		switch string(r.Target()) {
		case "/big":
			w.WriteString(big)
		case "/stream":
			for i := range 50 {
				fmt.Fprintf(w, "line %d\n", i)
				w.Flush() // chunked, over several messages
			}
		default:
			sum := sha256.Sum256(body)
			fmt.Fprintf(w, "%s %s %d %x", r.Method(), r.Target(), len(body), sum[:4])
		}
	})
	for _, max := range []int{0, 97} { // whole replies, and replies cut every 97 bytes
		t.Run(fmt.Sprint("max", max), func(t *testing.T) {
			mt := newMemTarget(t, max, h)
			addr := startMessageProxy(t, mt)
			c := client(t)
			get := func(method, path string, body io.Reader) (*http.Response, string) {
				t.Helper()
				req, _ := http.NewRequest(method, "http://"+addr+path, body)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatalf("%s %s: %v", method, path, err)
				}
				return resp, string(b)
			}
			resp, body := get("GET", "/a?b=c", nil)
			if resp.StatusCode != 200 || body != fmt.Sprintf("GET /a?b=c 0 %x", sha256.Sum256(nil))[:len("GET /a?b=c 0 ")+8] {
				t.Errorf("GET: %d %q", resp.StatusCode, body)
			}
			if !strings.HasPrefix(resp.Header.Get("X-Forwarded"), "127.0.0.1") || !strings.Contains(resp.Header.Get("Via"), "simdedge") {
				t.Errorf("forwarding fields: %v", resp.Header)
			}
			payload := bytes.Repeat([]byte("body!"), 3000)
			sum := sha256.Sum256(payload)
			want := fmt.Sprintf("POST /p %d %x", len(payload), sum[:4])
			if _, body := get("POST", "/p", bytes.NewReader(payload)); body != want {
				t.Errorf("POST with length: %q, want %q", body, want)
			}
			// A body without a length arrives chunked and leaves de-chunked.
			if _, body := get("POST", "/p", io.MultiReader(bytes.NewReader(payload))); body != want {
				t.Errorf("POST chunked: %q, want %q", body, want)
			}
			if _, body := get("GET", "/big", nil); body != big {
				t.Errorf("big: %d bytes, want %d", len(body), len(big))
			}
			var lines strings.Builder
			for i := range 50 {
				fmt.Fprintf(&lines, "line %d\n", i)
			}
			if _, body := get("GET", "/stream", nil); body != lines.String() {
				t.Errorf("stream: %q", body)
			}
			if resp, body := get("HEAD", "/big", nil); resp.StatusCode != 200 || body != "" || resp.Header.Get("X-Method") != "HEAD" {
				t.Errorf("HEAD: %d %q %v", resp.StatusCode, body, resp.Header)
			}
		})
	}
}

func TestMessageTargetFailures(t *testing.T) {
	testenv.CheckGoroutines(t)
	const head = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n"
	for _, tc := range []struct {
		name   string
		pieces []string
		err    error
		status int    // 0: the response starts and is cut
		body   string // expected body when status is 200
	}{
		{"head split", []string{"HTTP/1.1 20", "0 OK\r\nContent-Le", "ngth: 10\r\n\r\n01234", "56789"}, nil, 200, "0123456789"},
		{"interim first", []string{"HTTP/1.1 100 Continue\r\n\r\n" + head + "0123456789"}, nil, 200, "0123456789"},
		{"chunked split", []string{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r", "\n01234\r\n5\r\n56789\r\n0\r", "\n\r\n"}, nil, 200, "0123456789"},
		{"until end", []string{"HTTP/1.1 200 OK\r\n\r\n01234", "56789"}, nil, 200, "0123456789"},
		{"malformed head", []string{"HTTP/1.1 2OO OK\r\n\r\n"}, nil, 502, ""},
		{"head never ends", []string{"HTTP/1.1 200 OK\r\n"}, nil, 502, ""},
		{"error before anything", nil, errors.New("test: connection refused"), 502, ""},
		{"timeout", nil, timeoutErr{}, 504, ""},
		{"bytes after body", []string{head + "0123456789extra"}, nil, 502, ""},
		// Nothing reached the client yet: the response is replaced.
		{"short body", []string{head + "01234"}, nil, 502, ""},
		// The first part was flushed to the client: the response is cut.
		{"error mid-body", []string{head + "01234"}, errors.New("test: peer closed"), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &scriptTarget{pieces: tc.pieces, err: tc.err}
			addr := startMessageProxy(t, st)
			resp, err := client(t).Get("http://" + addr + "/x")
			if tc.status == 0 {
				// The head went out; the body is cut, which the
				// client must notice.
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if err == nil {
					t.Fatal("truncated response read without error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != tc.status || tc.status == 200 && string(b) != tc.body {
				t.Errorf("got %d %q (%v), want %d %q", resp.StatusCode, b, err, tc.status, tc.body)
			}
			if !bytes.HasPrefix(st.last, []byte("GET /x HTTP/1.1\r\n")) || !bytes.HasSuffix(st.last, []byte("Content-Length: 0\r\n\r\n")) {
				t.Errorf("request sent: %q", st.last)
			}
		})
	}
}

func TestMessageUpstreamOptions(t *testing.T) {
	mt := &memTarget{}
	if _, err := NewUpstream(UpstreamOptions{Targets: []string{"a:1", "b:2"}, MessageTargets: []MessageTarget{mt}}); !errors.Is(err, ErrMixedTargets) {
		t.Errorf("fewer message targets than names: %v", err)
	}
	if _, err := NewUpstream(UpstreamOptions{Targets: []string{"a:1"}, MessageTargets: []MessageTarget{nil}}); !errors.Is(err, ErrMixedTargets) {
		t.Errorf("nil message target: %v", err)
	}
	up, err := NewUpstream(UpstreamOptions{Targets: []string{"a:1"}, MessageTargets: []MessageTarget{mt}})
	if err != nil {
		t.Fatal(err)
	}
	up.Close()
	if mt.closed.Load() != 1 {
		t.Errorf("Close closed the message target %d times, want 1", mt.closed.Load())
	}
}

// TestMessageTargetRetriesStatus: a message target's status that the
// retry policy names (503 by default) is retried on another target, as on
// every other path (the attempt driver's Head), before anything of it
// reaches the client.
func TestMessageTargetRetriesStatus(t *testing.T) {
	testenv.CheckGoroutines(t)
	down := &countTarget{MessageTarget: &scriptTarget{pieces: []string{"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\n\r\ndown"}}}
	up := &countTarget{MessageTarget: &scriptTarget{pieces: []string{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nup"}}}
	addr, _ := startProxy(t, UpstreamOptions{Name: "msg", Targets: []string{"down:7471", "up:7471"},
		MessageTargets: []MessageTarget{down, up}}, server.Options{})
	c := client(t)
	for i := range 4 {
		resp, err := c.Get("http://" + addr + "/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "up" {
			t.Fatalf("request %d: %d %q", i, resp.StatusCode, b)
		}
	}
	if down.n.Load() == 0 {
		t.Error("the 503 target was never tried")
	}
}
