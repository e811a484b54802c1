package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/simdedge/simdedge/internal/testnet"
)

// TestRecorder: the recorder keeps request lines as sent, malformed or
// not, every Host field and the case header, reads bodies of both framings
// and answers each request on one connection.
func TestRecorder(t *testing.T) {
	rec, err := startRecorder()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.close()
	c, err := net.Dial("tcp", rec.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /admin/x /pub HTTP/1.1\r\nHost: a\r\nhost: b\r\nX-Attack-Case: 1\r\nContent-Length: 3\r\n\r\nabc"+
		"POST /p HTTP/1.1\r\nHost: c\r\nx-attack-case: 2\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n")
	br := bufio.NewReader(c)
	for i := range 2 {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("response %d: %d", i, resp.StatusCode)
		}
	}
	if got := rec.byCase("1"); len(got) != 1 || got[0].line != "GET /admin/x /pub HTTP/1.1" || strings.Join(got[0].hosts, ",") != "a,b" {
		t.Errorf("case 1: %+v", got)
	}
	if got := rec.byCase("2"); len(got) != 1 || got[0].line != "POST /p HTTP/1.1" || strings.Join(got[0].hosts, ",") != "c" {
		t.Errorf("case 2: %+v", got)
	}
	if got := rec.byCase("3"); len(got) != 0 {
		t.Errorf("case 3: %+v", got)
	}
}

// h2cServer is a net/http server that speaks h2c with prior knowledge and
// answers 204: a server that refuses malformed requests its own way.
func h2cServer(t *testing.T) string {
	l := testnet.Listen(t)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	})}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetUnencryptedHTTP2(true)
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// refusingServer reads the preface and about 4 KB of frames from each
// connection, then sends GOAWAY ENHANCE_YOUR_CALM and closes as a server
// does that refuses everything: its side first, then, after reading what
// the client still sends for a moment, the connection.
func refusingServer(t *testing.T) string {
	l := testnet.Listen(t)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				fr := http2.NewFramer(c, c)
				if _, err := io.CopyN(io.Discard, c, int64(len(h2Preface))); err != nil || fr.WriteSettings() != nil {
					return
				}
				for n := 0; n < 4096; {
					f, err := fr.ReadFrame()
					if err != nil {
						return
					}
					n += 9 + int(f.Header().Length)
					if _, ok := f.(*http2.HeadersFrame); ok {
						break
					}
				}
				fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, nil)
				c.(*net.TCPConn).CloseWrite()
				c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return l.Addr().String()
}

func requestFields(scheme, path string) []hpack.HeaderField {
	return []hpack.HeaderField{
		{Name: ":method", Value: "GET"}, {Name: ":scheme", Value: scheme},
		{Name: ":authority", Value: "a.test"}, {Name: ":path", Value: path},
	}
}

// TestH2Request: an answer's status, over h2c and h2 over TLS, and a
// refusal as a reset or an error status, never an error of the client.
func TestH2Request(t *testing.T) {
	addr := h2cServer(t)
	if out := h2Request(addr, false, requestFields("http", "/ok")); out.status != http.StatusNoContent {
		t.Errorf("h2c: %s, want 204", out)
	}
	out := h2Request(addr, false, append(requestFields("http", "/ok"), hpack.HeaderField{Name: "Upper", Value: "x"}))
	if out.err != nil || out.status == http.StatusNoContent || out.String() == "no answer" {
		t.Errorf("uppercase field: %s, want a refusal", out)
	}

	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	if out := h2Request(ts.Listener.Addr().String(), true, requestFields("https", "/ok")); out.status != http.StatusAccepted {
		t.Errorf("h2: %s, want 202", out)
	}
	if out := h2Request(refusingServer(t), false, requestFields("http", "/")); out.String() != "GOAWAY ENHANCE_YOUR_CALM" {
		t.Errorf("refusing server: %s, want GOAWAY ENHANCE_YOUR_CALM", out)
	}
	if out := h2Request(testnet.RefusingAddr(t), false, requestFields("http", "/")); out.err == nil {
		t.Errorf("closed port: %s, want an error", out)
	}
}

// TestFloodConn: each flood writes frames and ends within its bound,
// whether the server closes the connection or not.
func TestFloodConn(t *testing.T) {
	const bound = 300 * time.Millisecond
	res, err := floodConn(context.Background(), refusingServer(t), kindContinuation, bound, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	result, _ := res.report(bound)
	if res.closedAt == 0 || res.closedAt > bound || !res.goaway || res.goawayCode != http2.ErrCodeEnhanceYourCalm || !strings.Contains(result, "closed after") {
		t.Errorf("refusing server: %s: %+v", result, res)
	}

	addr := h2cServer(t)
	for _, kind := range floodKinds {
		start := time.Now()
		res, err := floodConn(context.Background(), addr, kind, bound, os.Getpid())
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		result, notes := res.report(bound)
		t.Logf("%s: %s (%s)", kind, result, notes)
		if res.frames == 0 || (res.closedAt != 0 && res.framesAtClose > res.frames) {
			t.Errorf("%s: %+v", kind, res)
		}
		if took := time.Since(start); took > bound+floodHandshake+floodReadSlack {
			t.Errorf("%s took %s", kind, took)
		}
	}
}
