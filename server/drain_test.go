package server

import (
	"bufio"
	"io"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestStartDrainHTTP1: after StartDrain the listener still accepts; a
// keep-alive connection's next response says "Connection: close" and the
// connection ends after it, and a connection opened during the drain is
// served once and closed.
func TestStartDrainHTTP1(t *testing.T) {
	s, addr := startTCP(t, okHandler("ok"), Options{})
	c := dial(t, addr)
	br := bufio.NewReader(c)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if resp, _ := readResponse(t, br, "GET"); resp.Close {
		t.Fatal("closed before the drain")
	}
	s.StartDrain()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	resp, body := readResponse(t, br, "GET")
	if resp.StatusCode != 200 || body != "ok" || !resp.Close {
		t.Fatalf("during the drain: %d %q close=%v, want 200 ok with Connection: close", resp.StatusCode, body, resp.Close)
	}
	expectClosed(t, br)

	c2 := dial(t, addr) // the listener is still open
	br2 := bufio.NewReader(c2)
	io.WriteString(c2, "GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	if resp, body := readResponse(t, br2, "GET"); resp.StatusCode != 200 || body != "ok" || !resp.Close {
		t.Fatalf("new connection during the drain: %d %q close=%v", resp.StatusCode, body, resp.Close)
	}
	expectClosed(t, br2)
}

// TestStartDrainH2: an HTTP/2 connection open at StartDrain gets GOAWAY
// at once (NO_ERROR, its last stream) and then ends; one opened during the
// drain is served its first stream and then gets GOAWAY.
func TestStartDrainH2(t *testing.T) {
	s, addr := startH2C(t, okHandler("ok"), Options{})
	old := dialH2(t, addr)
	old.headers(1, true, old.block("GET", "/"))
	if status, _ := old.waitStream(1); status != "200" {
		t.Fatalf("before the drain: %q", status)
	}
	s.StartDrain()
	old.c.SetReadDeadline(time.Now().Add(testTimeout))
	for {
		f := old.read()
		if ga, ok := f.(*http2.GoAwayFrame); ok {
			if ga.ErrCode != http2.ErrCodeNo || ga.LastStreamID != 1 {
				t.Fatalf("GOAWAY %v last %d, want NO_ERROR last 1", ga.ErrCode, ga.LastStreamID)
			}
			break
		}
	}
	// Then it ends (a second GOAWAY may come first: the idle reader's
	// goodbye).
	ended := false
	for range 3 {
		if old.waitGoAway() == ^http2.ErrCode(0) {
			ended = true
			break
		}
	}
	if !ended {
		t.Fatal("the drained connection stayed open")
	}

	fresh := dialH2(t, addr)
	fresh.headers(1, true, fresh.block("GET", "/"))
	if status, _ := fresh.waitStream(1); status != "200" {
		t.Fatalf("new connection during the drain: %q", status)
	}
	if code := fresh.waitGoAway(); code != http2.ErrCodeNo {
		t.Fatalf("new connection during the drain: GOAWAY %v after its first stream, want NO_ERROR", code)
	}
}
