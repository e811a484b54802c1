package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/simdedge/simdedge/internal/h3test"
	"github.com/simdedge/simdedge/server/access"
)

// TestH3Retry: Initials from many source ports that never finish their
// handshakes push the handshakes in flight past RetryThreshold; from then
// on new ones get a Retry (RFC 9000 §8.1.2) instead of server state, and
// a real client, which answers the Retry, is still served.
func TestH3Retry(t *testing.T) {
	const threshold = 4
	_, p, addr := startH3(t, HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") }), Options{}, HTTP3Options{RetryThreshold: threshold})
	initials := h3test.CaptureInitials(t, h3RawTLS(p), 3*threshold)
	server, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	// Each from a port of its own, as a spoofed flood's would be.
	handshakes, retries := h3test.SendInitials(t, func() (*net.UDPConn, error) {
		return net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	}, server, initials)
	if handshakes < threshold || retries < len(initials)-threshold-1 {
		t.Fatalf("%d handshakes began and %d Retries of %d Initials, threshold %d", handshakes, retries, len(initials), threshold)
	}
	c, _ := h3Client(t, p)
	resp, b := h3Do(t, c, "GET", "https://"+addr+"/", nil)
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("a real client under Retry: %d %q", resp.StatusCode, b)
	}
}

// TestH3ListenerRules: the listener's deny rules refuse a QUIC connection
// at its first packet; allowed addresses are served.
func TestH3ListenerRules(t *testing.T) {
	for _, tc := range []struct {
		deny   string
		served bool
	}{{"10.0.0.0/8", true}, {"127.0.0.1/32", false}} {
		deny, _, err := access.ParsePrefixes([]string{tc.deny})
		if err != nil {
			t.Fatal(err)
		}
		h := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") })
		_, p, addr := startH3(t, h, Options{}, HTTP3Options{Rules: access.Rules{Deny: deny}})
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		c, err := quic.DialAddr(ctx, addr, h3RawTLS(p), nil)
		cancel()
		if !tc.served {
			if err == nil {
				c.CloseWithError(0, "")
				t.Fatalf("deny %s: a denied client connected", tc.deny)
			}
			continue
		}
		if err != nil {
			t.Fatalf("deny %s: %v", tc.deny, err)
		}
		h3test.Control(t, c)
		if status, _, err := h3test.Request(t, c, nil, h3test.Get("GET", "/")...); status != "200" {
			t.Fatalf("deny %s: %q %v", tc.deny, status, err)
		}
		c.CloseWithError(0, "")
	}
}

// TestH3ConnsPerIP: MaxConnsPerIP counts QUIC connections: one over the
// address's share is closed once accepted, and the slot comes back when
// the first connection ends.
func TestH3ConnsPerIP(t *testing.T) {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") })
	_, p, addr := startH3(t, h, Options{Limits: Limits{MaxConnsPerIP: 1}}, HTTP3Options{})
	first := h3test.Dial(t, addr, h3RawTLS(p), nil)
	if status, _, err := h3test.Request(t, first, nil, h3test.Get("GET", "/")...); status != "200" {
		t.Fatalf("first connection: %q %v", status, err)
	}
	// A refused connection may close before the client opens its
	// control stream: dial without one (the server needs none to
	// answer), and take any failure as the refusal.
	try := func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		c, err := quic.DialAddr(ctx, addr, h3RawTLS(p), nil)
		if err != nil {
			return "", err
		}
		defer c.CloseWithError(0, "")
		status, _, err := h3test.Request(t, c, nil, h3test.Get("GET", "/")...)
		return status, err
	}
	if status, err := try(); err == nil || status != "" {
		t.Fatalf("a second connection from the address was served: %q %v", status, err)
	}
	first.CloseWithError(0, "")
	deadline := time.Now().Add(testTimeout)
	for {
		if status, _ := try(); status == "200" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slot did not come back after the first connection ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestH3Migration: a client that moves to another port (a new socket,
// RFC 9000 §9: probed with PATH_CHALLENGE, then switched) keeps its
// connection, and its requests are served from the new address.
func TestH3Migration(t *testing.T) {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString(r.RemoteAddr().String()) })
	_, p, addr := startH3(t, h, Options{}, HTTP3Options{})
	sock1, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr1 := &quic.Transport{Conn: sock1}
	defer tr1.Close()
	server, _ := net.ResolveUDPAddr("udp", addr)
	dctx, dcancel := context.WithTimeout(context.Background(), testTimeout)
	defer dcancel()
	c, err := tr1.Dial(dctx, server, h3RawTLS(p), &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	h3test.Control(t, c)
	_, before, err := h3test.Request(t, c, nil, h3test.Get("GET", "/")...)
	if err != nil {
		t.Fatal(err)
	}
	sock, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quic.Transport{Conn: sock}
	defer tr.Close()
	path, err := c.AddPath(tr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := path.Probe(ctx); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := path.Switch(); err != nil {
		t.Fatalf("switch: %v", err)
	}
	status, after, err := h3test.Request(t, c, nil, h3test.Get("GET", "/")...)
	if err != nil || status != "200" {
		t.Fatalf("after the move: %q %v", status, err)
	}
	if string(after) == string(before) || string(after) != sock.LocalAddr().String() {
		t.Fatalf("served from %s before and %s after the move to %s", before, after, sock.LocalAddr())
	}
}

// h3Delay relays datagrams between a client and addr, holding the
// client's Initial and Handshake packets after its first datagram for
// hold: the server then has the client's 0-RTT data long before its
// handshake completes, however fast loopback is.
func h3Delay(t *testing.T, addr string, hold time.Duration) string {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	server, _ := net.ResolveUDPAddr("udp", addr)
	back, err := net.DialUDP("udp", nil, server)
	if err != nil {
		t.Fatal(err)
	}
	var client atomic.Pointer[net.UDPAddr]
	var wg sync.WaitGroup
	t.Cleanup(func() { front.Close(); back.Close(); wg.Wait() })
	wg.Add(2)
	go func() {
		defer wg.Done()
		first := true
		for {
			b := make([]byte, 2048)
			n, from, err := front.ReadFromUDP(b)
			if err != nil {
				return
			}
			client.Store(from)
			typ := h3test.LongType(b[0])
			if !first && (typ == 0 || typ == 2) {
				time.AfterFunc(hold, func() { back.Write(b[:n]) })
				continue
			}
			first = false
			back.Write(b[:n])
		}
	}()
	go func() {
		defer wg.Done()
		b := make([]byte, 2048)
		for {
			n, err := back.Read(b)
			if err != nil {
				return
			}
			if c := client.Load(); c != nil {
				front.WriteToUDP(b[:n], c)
			}
		}
	}()
	return front.LocalAddr().String()
}

// TestH3EarlyData: with Allow0RTT, a resumed client's GET in early data is
// served (marked Early-Data: 1 for the handler and upstreams) and its
// POST is answered 425 Too Early (RFC 8470 §5.2); without it the server
// takes no early data.
func TestH3EarlyData(t *testing.T) {
	for _, allow := range []bool{true, false} {
		t.Run(fmt.Sprint("allow=", allow), func(t *testing.T) {
			h := HandlerFunc(func(w *ResponseWriter, r *Request) {
				v, _ := r.Header("Early-Data")
				w.WriteString(string(r.Method()) + " early=" + string(v))
			})
			_, p, addr := startH3(t, h, Options{}, HTTP3Options{Allow0RTT: allow})
			tc := h3RawTLS(p)
			tc.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			// The first connection brings the session ticket.
			c := h3test.Dial(t, addr, tc, nil)
			if status, _, err := h3test.Request(t, c, nil, h3test.Get("GET", "/")...); status != "200" {
				t.Fatalf("first connection: %q %v", status, err)
			}
			c.CloseWithError(0, "")
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			ec, err := quic.DialAddrEarly(ctx, h3Delay(t, addr, time.Second), tc, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ec.CloseWithError(0, "")
			h3test.Control(t, ec)
			type answer struct {
				status string
				body   []byte
				err    error
			}
			ask := func(fields ...string) chan answer {
				st, err := ec.OpenStream()
				if err != nil {
					t.Fatal(err)
				}
				st.Write(h3test.Headers(fields...))
				st.Close()
				ch := make(chan answer, 1)
				go func() {
					s, b, err := h3test.Response(st)
					ch <- answer{s, b, err}
				}()
				return ch
			}
			get := ask(h3test.Get("GET", "/")...)
			post := ask(":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", "/")
			g, po := <-get, <-post
			used := ec.ConnectionState().Used0RTT
			if used != allow {
				t.Fatalf("0-RTT used %v", used)
			}
			if !allow {
				if g.status != "200" || po.status != "200" || string(po.body) != "POST early=" {
					t.Fatalf("without 0-RTT: GET %q POST %q %q", g.status, po.status, po.body)
				}
				return
			}
			if g.status != "200" || string(g.body) != "GET early=1" {
				t.Errorf("GET in early data: %q %q %v", g.status, g.body, g.err)
			}
			if po.status != "425" {
				t.Errorf("POST in early data: %q %q %v, want 425", po.status, po.body, po.err)
			}
		})
	}
}
