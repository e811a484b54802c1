package router

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/servertest"
)

func named(name string) server.Handler {
	return Respond(200, name, nil)
}

func exchange(t *testing.T, l *servertest.MessageListener, req string) (*http.Response, string) {
	t.Helper()
	replies, err := l.Exchange([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(bytes.Join(replies, nil))), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func serve(t *testing.T, h server.Handler) *servertest.MessageListener {
	testenv.CheckGoroutines(t)
	s := server.New(server.Options{Handler: h})
	l := servertest.NewMessageListener(0)
	go s.ServeMessages(l)
	t.Cleanup(func() { s.Close() })
	return l
}

func TestMatch(t *testing.T) {
	tab, err := New([]Route{
		{Match: Match{Path: "/exact"}, Handler: named("exact")},
		{Match: Match{Host: "api.example.com", PathPrefix: "/", Methods: []string{"GET", "POST"}}, Handler: named("api")},
		{Match: Match{Host: "*.example.com", PathPrefix: "/w/"}, Handler: named("wild")},
		{Match: Match{PathPrefix: "/healthz"}, Handler: named("health")},
	})
	if err != nil {
		t.Fatal(err)
	}
	l := serve(t, tab)
	for _, tc := range []struct{ method, target, host, want string }{
		{"GET", "/exact", "x", "exact"},
		{"GET", "/exact?q", "x", "exact"},
		{"GET", "/exact/", "x", "404"},
		{"GET", "/anything", "api.example.com", "api"},
		{"GET", "/anything", "API.Example.COM:8080", "api"},
		{"DELETE", "/anything", "api.example.com", "404"},
		{"POST", "/w/x", "api.example.com", "api"},
		{"PUT", "/w/x", "api.example.com", "wild"},
		{"GET", "/w/x", "a.b.example.com", "wild"},
		{"GET", "/w/x", "example.com", "404"},
		{"GET", "/w/x", "badexample.com", "404"},
		{"GET", "http://a.example.com/w/y?z", "other", "wild"},
		{"GET", "/healthzzz", "x", "health"},
		{"GET", "/health", "x", "404"},
	} {
		resp, body := exchange(t, l, tc.method+" "+tc.target+" HTTP/1.1\r\nHost: "+tc.host+"\r\n\r\n")
		got := body
		if resp.StatusCode == 404 {
			got = "404"
		}
		if got != tc.want {
			t.Errorf("%s %s host %s: got %q, want %q", tc.method, tc.target, tc.host, got, tc.want)
		}
	}
}

func TestNewRejects(t *testing.T) {
	for _, m := range []Match{{Host: "*."}, {Host: "a*b"}, {Path: "x"}, {PathPrefix: "x"}, {Path: "/a", PathPrefix: "/b"}} {
		if _, err := New([]Route{{Match: m, Handler: named("x")}}); err == nil {
			t.Errorf("%+v accepted", m)
		}
	}
	if _, err := New([]Route{{}}); err != ErrNoHandler {
		t.Errorf("nil handler: %v", err)
	}
}

func TestEcho(t *testing.T) {
	l := serve(t, Echo())
	resp, body := exchange(t, l, "POST /echo?x=1 HTTP/1.1\r\nHost: h\r\nX-A: \"q\"\\\xe9\r\nContent-Length: 5\r\n\r\nhello")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var got struct {
		Method, Target, Version, Host string
		Headers                       [][2]string
		BodyLen                       int `json:"body_len"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("echo is not JSON: %v\n%s", err, body)
	}
	want := [][2]string{{"Host", "h"}, {"X-A", "\"q\"\\\u00e9"}, {"Content-Length", "5"}}
	if got.Method != "POST" || got.Target != "/echo?x=1" || got.Version != "HTTP/1.1" || got.Host != "h" || got.BodyLen != 5 ||
		len(got.Headers) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got.Headers[i] != want[i] {
			t.Errorf("header %d: %q, want %q", i, got.Headers[i], want[i])
		}
	}
}

func TestSwitch(t *testing.T) {
	a, _ := New([]Route{{Handler: named("a")}})
	b, _ := New([]Route{{Handler: named("b")}})
	sw := NewSwitch(a)
	l := serve(t, sw)
	if _, body := exchange(t, l, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); body != "a" {
		t.Fatalf("got %q", body)
	}
	sw.Store(b)
	if _, body := exchange(t, l, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); body != "b" {
		t.Fatalf("after Store: got %q", body)
	}
}

// TestZeroAllocRouted: routing and a fixed response allocate nothing on a
// warm keep-alive connection; Echo neither, for a body in the buffer.
func TestZeroAllocRouted(t *testing.T) {
	tab, _ := New([]Route{
		{Match: Match{Host: "*.example.com", PathPrefix: "/api/"}, Handler: named("api")},
		{Match: Match{PathPrefix: "/healthz"}, Handler: Respond(200, "ok\n", [][2]string{{"Content-Type", "text/plain"}})},
		{Match: Match{PathPrefix: "/echo"}, Handler: Echo()},
	})
	testenv.CheckGoroutines(t)
	s := server.New(server.Options{Handler: tab})
	addr := servetest.Serve(t, s, testEngine)
	c := testnet.Dial(t, addr, 10*time.Second)
	for _, req := range []string{
		"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n",
		"POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\nhi",
	} {
		rb := []byte(req)
		buf := make([]byte, 4096)
		c.Write(rb)
		size, _ := c.Read(buf)
		if !strings.HasPrefix(string(buf[:size]), "HTTP/1.1 200") {
			t.Fatalf("got %q", buf[:size])
		}
		allocs := testing.AllocsPerRun(100, func() {
			c.Write(rb)
			io.ReadFull(c, buf[:size])
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocations per request", req[:12], allocs)
		}
	}
}
