package faultsrv

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// waitTime bounds every read that is expected to stall: long enough to
// tell a stall from a slow answer on a busy machine, short enough to keep
// the suite quick.
const waitTime = 300 * time.Millisecond

const get = "GET / HTTP/1.1\r\nHost: t\r\n\r\n"

// roundTrip sends one request on a new connection and reads until the
// server closes, stalls past waitTime, or fails.
func roundTrip(t *testing.T, addr string) (string, error) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if _, err := c.Write([]byte(get)); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(waitTime))
	b, err := io.ReadAll(c)
	return string(b), err
}

func client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: false}}
}

func TestNormalAndCounters(t *testing.T) {
	s := New(t, Behavior{})
	hc := client()
	for range 3 {
		resp, err := hc.Get("http://" + s.Addr() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "ok "+s.Addr()+"\n" || resp.Header.Get("X-Target") != s.Addr() {
			t.Fatalf("%d %q", resp.StatusCode, b)
		}
	}
	if s.Requests() != 3 || s.Conns() != 1 {
		t.Errorf("requests %d conns %d (keep-alive)", s.Requests(), s.Conns())
	}
}

func TestRefuseAndRecover(t *testing.T) {
	s := New(t, Behavior{Kind: Refuse})
	if _, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial a refusing server: %v", err)
	}
	if err := s.Set(Behavior{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := roundTrip(t, s.Addr()); !strings.HasPrefix(b, "HTTP/1.1 200") {
		t.Fatalf("after recovery: %q", b)
	}
	a, err := RefusedAddr()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", a, 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("RefusedAddr: %v", err)
	}
}

func TestBlackHole(t *testing.T) {
	s := New(t, Behavior{Kind: BlackHole})
	b, err := roundTrip(t, s.Addr())
	if b != "" || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("%q %v", b, err)
	}
	if s.Conns() != 1 || s.Requests() != 0 {
		t.Errorf("conns %d requests %d", s.Conns(), s.Requests())
	}
}

func TestResetAfter(t *testing.T) {
	s := New(t, Behavior{Kind: ResetAfter, Bytes: 12})
	b, err := roundTrip(t, s.Addr())
	if b != "HTTP/1.1 200" && b != "" || !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("%q %v", b, err)
	}
	if s.Requests() != 1 {
		t.Errorf("requests %d", s.Requests())
	}
}

func TestStallHead(t *testing.T) {
	s := New(t, Behavior{Kind: StallHead})
	b, err := roundTrip(t, s.Addr())
	if b != "" || !errors.Is(err, os.ErrDeadlineExceeded) || s.Requests() != 1 {
		t.Fatalf("%q %v requests %d", b, err, s.Requests())
	}
}

func TestStallBodyAndCloseMidBody(t *testing.T) {
	body := strings.Repeat("x", 100)
	for _, k := range []Kind{StallBody, CloseMidBody} {
		s := New(t, Behavior{Kind: k, Bytes: 10, Body: body})
		b, err := roundTrip(t, s.Addr())
		head, got, _ := strings.Cut(b, "\r\n\r\n")
		if !strings.Contains(head, "Content-Length: 100") || got != body[:10] {
			t.Fatalf("kind %d: %q", k, b)
		}
		switch k {
		case StallBody:
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("stall body: %v", err)
			}
		case CloseMidBody:
			if err != nil {
				t.Errorf("close mid-body: %v, want EOF", err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(b)), nil)
			if err == nil {
				_, err = io.ReadAll(resp.Body)
			}
			if !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("a client sees %v, want unexpected EOF", err)
			}
		}
	}
}

func TestStatusThenRecover(t *testing.T) {
	s := New(t, Behavior{Kind: Status, Status: 503, Count: 2})
	hc := client()
	var codes []int
	for range 4 {
		resp, err := hc.Get("http://" + s.Addr() + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		codes = append(codes, resp.StatusCode)
	}
	if codes[0] != 503 || codes[1] != 503 || codes[2] != 200 || codes[3] != 200 || s.StatusAnswers() != 2 {
		t.Errorf("codes %v, status answers %d", codes, s.StatusAnswers())
	}
	// For a while: 502 until For passes.
	s.Set(Behavior{Kind: Status, Status: 502, For: 50 * time.Millisecond})
	if b, _ := roundTrip(t, s.Addr()); !strings.HasPrefix(b, "HTTP/1.1 502") {
		t.Fatalf("%q", b)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := roundTrip(t, s.Addr())
		if strings.HasPrefix(b, "HTTP/1.1 200") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("never recovered")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Neither count nor time: always.
	s.Set(Behavior{Kind: Status, Status: 500})
	for range 3 {
		if b, _ := roundTrip(t, s.Addr()); !strings.HasPrefix(b, "HTTP/1.1 500") {
			t.Fatalf("%q", b)
		}
	}
}

func TestSlow(t *testing.T) {
	const delay = 50 * time.Millisecond
	s := New(t, Behavior{Kind: Slow, Delay: delay})
	start := time.Now()
	resp, err := client().Get("http://" + s.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); took < delay || resp.StatusCode != 200 {
		t.Errorf("answered %d after %v, want 200 after at least %v", resp.StatusCode, took, delay)
	}
}

// TestCloseEndsStalls: Close returns with connections stalled in every
// way (it would hang otherwise), and Set afterwards fails.
func TestCloseEndsStalls(t *testing.T) {
	s, err := Start(Behavior{Kind: StallHead})
	if err != nil {
		t.Fatal(err)
	}
	var cs []net.Conn
	for _, b := range []Behavior{{Kind: StallHead}, {Kind: StallBody, Bytes: 1}, {Kind: BlackHole}, {Kind: Slow, Delay: time.Hour}} {
		s.Set(b)
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(get))
		cs = append(cs, c)
	}
	// Let the server pick the requests up.
	deadline := time.Now().Add(10 * time.Second)
	for s.Conns() < 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	done := make(chan struct{})
	go func() { s.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hung")
	}
	for _, c := range cs {
		c.Close()
	}
	if err := s.Set(Behavior{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Set after Close: %v", err)
	}
}
