package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/accesslog"
	"github.com/simdedge/simdedge/server/edgetls"
	"github.com/simdedge/simdedge/server/metrics"
)

// h3StreamCode is the application error code a stream was reset with, or
// -1.
func h3StreamCode(err error) int64 {
	var se *quic.StreamError
	if errors.As(err, &se) {
		return int64(se.ErrorCode)
	}
	return -1
}

// TestH3Malformed: requests HTTP/1.1 could not have sent are refused
// with H3_MESSAGE_ERROR (RFC 9114 §4.1.2) by the checks HTTP/2 uses
// (h2map.go), a field section over the limit is answered 431, and the
// connection goes on serving.
func TestH3Malformed(t *testing.T) {
	_, p, addr := startH3(t, h3TestHandler(), Options{}, HTTP3Options{MaxHeaderBytes: 4 << 10})
	c := h3RawDial(t, addr, h3RawTLS(p), nil)
	get := h3RawGet("GET", "/proto")
	cases := []struct {
		name   string
		fields []string
	}{
		{"authority and host differ", append(get, "host", "b.example")},
		{"uppercase name", append(get, "X-Big", "1")},
		{"connection field", append(get, "connection", "close")},
		{"no path", []string{":method", "GET", ":scheme", "https", ":authority", "a.example"}},
		{"absolute path", []string{":method", "GET", ":scheme", "https", ":authority", "a.example", ":path", "http://x/"}},
		{"space in method", []string{":method", "G T", ":scheme", "https", ":authority", "a.example", ":path", "/"}},
		{"bad host", []string{":method", "GET", ":scheme", "https", ":authority", "a@b", ":path", "/"}},
		{"pseudo after regular", append([]string{":method", "GET", "x", "1"}, get[2:]...)},
		{"two paths", append(get, ":path", "/b")},
		{"te other than trailers", append(get, "te", "gzip")},
	}
	for _, tc := range cases {
		status, _, err := h3RawRequest(t, c, nil, tc.fields...)
		if code := h3StreamCode(err); code != h3MessageError {
			t.Errorf("%s: status %q err %v, want reset with H3_MESSAGE_ERROR", tc.name, status, err)
		}
	}
	status, body, err := h3RawRequest(t, c, nil, append(get, "x-big", strings.Repeat("b", 5<<10))...)
	if err != nil || status != "431" || !strings.Contains(string(body), "Too Large") {
		t.Errorf("over MaxHeaderBytes: status %q %q err %v, want 431", status, body, err)
	}
	// A declared length the body does not match.
	status, _, err = h3RawRequest(t, c, []byte("abc"), ":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", "/echo", "content-length", "5")
	if h3StreamCode(err) != h3MessageError {
		t.Errorf("short body: status %q err %v, want H3_MESSAGE_ERROR", status, err)
	}
	status, body, err = h3RawRequest(t, c, nil, get...)
	if err != nil || status != "200" || !strings.HasPrefix(string(body), "h3=true") {
		t.Fatalf("after the refusals: status %q body %q err %v", status, body, err)
	}
	// The host field alone is the authority, and the path is normalised.
	status, body, err = h3RawRequest(t, c, nil, ":method", "GET", ":scheme", "https", ":path", "/a/../proto", "host", "c.example")
	if err != nil || status != "200" || !strings.HasSuffix(string(body), "host=c.example body=0") {
		t.Fatalf("host field: status %q body %q err %v", status, body, err)
	}
}

// blockHandler runs until the client goes (OnStreamGone) or release is
// closed, counting how many run at once.
type blockHandler struct {
	running, peak atomic.Int32
	started       chan struct{}
	release       chan struct{}
	gone          atomic.Int32
}

func newBlockHandler() *blockHandler {
	return &blockHandler{started: make(chan struct{}, 1000), release: make(chan struct{})}
}

func (h *blockHandler) ServeEdge(w *ResponseWriter, r *Request) {
	if string(r.Target()) != "/block" {
		w.WriteString("ok")
		return
	}
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	gone := make(chan struct{})
	r.OnStreamGone(func() { close(gone) })
	h.started <- struct{}{}
	select {
	case <-gone:
		h.gone.Add(1)
	case <-h.release:
		w.WriteString("released")
	case <-time.After(testTimeout):
	}
}

// TestH3StreamLimit: a client may have MaxStreams requests open and no
// more (QUIC's MAX_STREAMS); a flood of streams opened and reset at once
// never runs more than MaxStreams handlers; another client is served
// meanwhile, and the flooding connection afterwards.
func TestH3StreamLimit(t *testing.T) {
	const limit = 4
	h := newBlockHandler()
	_, p, addr := startH3(t, h, Options{}, HTTP3Options{MaxStreams: limit})
	c := h3RawDial(t, addr, h3RawTLS(p), nil)
	var sts []*quic.Stream
	for range limit {
		st, err := c.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write(h3RawHeaders(h3RawGet("GET", "/block")...))
		st.Close()
		sts = append(sts, st)
	}
	for range limit {
		select {
		case <-h.started:
		case <-time.After(testTimeout):
			t.Fatal("handlers did not start")
		}
	}
	if _, err := c.OpenStream(); err == nil {
		t.Fatal("a stream past MaxStreams opened")
	}
	other := h3RawDial(t, addr, h3RawTLS(p), nil)
	if status, body, err := h3RawRequest(t, other, nil, h3RawGet("GET", "/")...); status != "200" || string(body) != "ok" {
		t.Fatalf("another client while the first holds its streams: %q %q %v", status, body, err)
	}
	for _, st := range sts {
		st.CancelRead(h3RequestCancelled)
	}
	// The flood: streams opened and reset as fast as credit allows.
	const flood = 300
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for i := range flood {
		st, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatalf("flood stream %d: %v", i, err)
		}
		st.Write(h3RawHeaders(h3RawGet("GET", "/block")...))
		st.CancelWrite(h3RequestCancelled)
		st.CancelRead(h3RequestCancelled)
	}
	if peak := h.peak.Load(); peak > limit {
		t.Fatalf("%d handlers ran at once, limit %d", peak, limit)
	}
	status, body, err := h3RawRequest(t, c, nil, h3RawGet("GET", "/")...)
	if status != "200" || string(body) != "ok" {
		t.Fatalf("after the flood: %q %q %v", status, body, err)
	}
}

// TestH3StreamReset: a client that resets its request stream mid-body
// fails the handler's body read; one that stops reading the response
// runs the handler's OnStreamGone.
func TestH3StreamReset(t *testing.T) {
	readErr := make(chan error, 1)
	h := newBlockHandler()
	handler := HandlerFunc(func(w *ResponseWriter, r *Request) {
		if string(r.Target()) == "/upload" {
			_, err := io.Copy(io.Discard, r.Body())
			readErr <- err
			return
		}
		h.ServeEdge(w, r)
	})
	_, p, addr := startH3(t, handler, Options{}, HTTP3Options{})
	c := h3RawDial(t, addr, h3RawTLS(p), nil)
	st, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	st.Write(h3RawHeaders(":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", "/upload"))
	st.Write(h3RawData(bytes.Repeat([]byte("x"), 10000)))
	time.Sleep(10 * time.Millisecond)
	st.CancelWrite(h3RequestCancelled)
	select {
	case err := <-readErr:
		if err == nil {
			t.Fatal("the handler read a reset body to its end")
		}
	case <-time.After(testTimeout):
		t.Fatal("the handler's body read did not fail")
	}
	st2, err := c.OpenStream()
	if err != nil {
		t.Fatal(err)
	}
	st2.Write(h3RawHeaders(h3RawGet("GET", "/block")...))
	st2.Close()
	<-h.started
	st2.CancelRead(h3RequestCancelled)
	deadline := time.Now().Add(testTimeout)
	for h.gone.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.gone.Load() != 1 {
		t.Fatal("OnStreamGone did not run after the client stopped reading")
	}
}

// TestH3ClientGone: a client that disappears mid-request (its connection
// closed while the handler waits and while it uploads) leaves the server
// healthy: the handlers end, a new client is served, and no goroutine is
// left (startH3 checks).
func TestH3ClientGone(t *testing.T) {
	h := newBlockHandler()
	_, p, addr := startH3(t, h, Options{}, HTTP3Options{})
	c := h3RawDial(t, addr, h3RawTLS(p), nil)
	st, _ := c.OpenStream()
	st.Write(h3RawHeaders(h3RawGet("GET", "/block")...))
	st.Close()
	<-h.started
	up, _ := c.OpenStream()
	up.Write(h3RawHeaders(":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", "/echo", "content-length", "100000"))
	up.Write(h3RawData(make([]byte, 5000)))
	time.Sleep(10 * time.Millisecond)
	c.CloseWithError(0, "gone")
	deadline := time.Now().Add(testTimeout)
	for h.gone.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if h.gone.Load() != 1 {
		t.Fatal("the waiting handler did not see its client go")
	}
	c2, _ := h3Client(t, p)
	resp, b := h3Do(t, c2, "GET", "https://"+addr+"/", nil)
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("new client: %d %q", resp.StatusCode, b)
	}
}

// TestH3Retry: Initials from many source ports that never finish their
// handshakes push the handshakes in flight past RetryThreshold; from then
// on new ones get a Retry (RFC 9000 §8.1.2) instead of server state, and
// a real client, which answers the Retry, is still served.
func TestH3Retry(t *testing.T) {
	const threshold = 4
	_, p, addr := startH3(t, HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") }), Options{}, HTTP3Options{RetryThreshold: threshold})
	initials := h3CaptureInitials(t, p, 3*threshold)
	server, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var retries, handshakes int
	for i, pkt := range initials {
		// Each from a port of its own, as a spoofed flood's would be.
		sock, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		defer sock.Close()
		sock.WriteToUDP(pkt, server)
		sock.SetReadDeadline(time.Now().Add(testTimeout))
		buf := make([]byte, 2048)
		n, _, err := sock.ReadFromUDP(buf)
		if err != nil || n == 0 {
			t.Fatalf("initial %d: no answer: %v", i, err)
		}
		switch h3LongType(buf[0]) {
		case 3:
			retries++
		case 0:
			handshakes++
		}
	}
	if handshakes < threshold || retries < len(initials)-threshold-1 {
		t.Fatalf("%d handshakes began and %d Retries of %d Initials, threshold %d", handshakes, retries, len(initials), threshold)
	}
	c, _ := h3Client(t, p)
	resp, b := h3Do(t, c, "GET", "https://"+addr+"/", nil)
	if resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("a real client under Retry: %d %q", resp.StatusCode, b)
	}
}

// h3LongType is a QUIC v1 long header's packet type (RFC 9000 §17.2:
// 0 Initial, 1 0-RTT, 2 Handshake, 3 Retry), -1 for a short header.
func h3LongType(b byte) int {
	if b&0x80 == 0 {
		return -1
	}
	return int(b>>4) & 3
}

// h3CaptureInitials records the first datagram (an Initial, each with a
// connection ID of its own) of n quic-go dials to a socket that never
// answers.
func h3CaptureInitials(t *testing.T, p *pki, n int) [][]byte {
	t.Helper()
	rec, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	var out [][]byte
	for i := range n {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			quic.DialAddr(ctx, rec.LocalAddr().String(), h3RawTLS(p), nil)
		}()
		buf := make([]byte, 2048)
		rec.SetReadDeadline(time.Now().Add(testTimeout))
		m, _, err := rec.ReadFromUDP(buf)
		cancel()
		wg.Wait()
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		if h3LongType(buf[0]) != 0 {
			t.Fatalf("dial %d: first datagram is not an Initial (%#x)", i, buf[0])
		}
		out = append(out, buf[:m])
		// Retransmissions of this dial are not wanted.
		for {
			rec.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
			if _, _, err := rec.ReadFromUDP(buf); err != nil {
				break
			}
		}
	}
	return out
}

// TestH3Shutdown: Shutdown sends GOAWAY, lets the request in flight end
// with its full response, and returns.
func TestH3Shutdown(t *testing.T) {
	h := newBlockHandler()
	s, p, addr := startH3(t, h, Options{}, HTTP3Options{})
	c := h3RawDial(t, addr, h3RawTLS(p), nil)
	goaway := h3WatchGoaway(t, c) // SETTINGS, then GOAWAY
	st, _ := c.OpenStream()
	st.Write(h3RawHeaders(h3RawGet("GET", "/block")...))
	st.Close()
	<-h.started
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		done <- s.Shutdown(ctx)
	}()
	select {
	case id := <-goaway:
		if id != uint64(st.StreamID())+4 {
			t.Errorf("GOAWAY names stream %d, want %d", id, st.StreamID()+4)
		}
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY")
	}
	close(h.release)
	status, body, err := h3RawResponse(st)
	if status != "200" || string(body) != "released" {
		t.Fatalf("the request in flight: %q %q %v", status, body, err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

// TestH3Observed: HTTP/3 requests get request IDs and access-log lines
// with proto HTTP/3.0 and the TLS version, and the listener counts the
// connection, its streams and a refused stream.
func TestH3Observed(t *testing.T) {
	sink := &lockedBuffer{}
	alog, err := accesslog.Open(accesslog.Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	set := metrics.NewSet()
	h := HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("id=" + string(r.RequestID())) })
	_, p, addr := startH3(t, h, Options{AccessLog: alog, Metrics: set, RequestID: RequestIDOptions{Header: "X-Request-Id", Generate: true}}, HTTP3Options{})
	c := h3RawDial(t, addr, h3RawTLS(p), nil)
	const n = 3
	for i := range n {
		if status, body, err := h3RawRequest(t, c, nil, h3RawGet("GET", "/s")...); status != "200" || !strings.HasPrefix(string(body), "id=") {
			t.Fatalf("request %d: %q %q %v", i, status, body, err)
		}
	}
	h3RawRequest(t, c, nil, append(h3RawGet("GET", "/s"), "Bad", "1")...)
	c.CloseWithError(0, "")
	var h3 [metrics.H3Kinds]uint64
	deadline := time.Now().Add(testTimeout)
	for h3[metrics.H3Conn] == 0 && time.Now().Before(deadline) {
		for _, l := range set.Listeners() {
			h3 = l.Totals().HTTP3
		}
		time.Sleep(5 * time.Millisecond)
	}
	if h3[metrics.H3Conn] != 1 || h3[metrics.H3Stream] != n || h3[metrics.H3Error] != 1 {
		t.Errorf("HTTP/3 counts %v, want 1 connection, %d streams, 1 error", h3, n)
	}
	if err := alog.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(sink.b.String(), "\n"), "\n")
	if len(lines) != n {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), n, sink.b.String())
	}
	for i, line := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, line)
		}
		if e["proto"] != "HTTP/3.0" || e["status"] != 200.0 || e["request_id"] == "" || e["tls"] != "TLS1.3" {
			t.Errorf("line %d: %s", i, line)
		}
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
			typ := h3LongType(b[0])
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
			c := h3RawDial(t, addr, tc, nil)
			if status, _, err := h3RawRequest(t, c, nil, h3RawGet("GET", "/")...); status != "200" {
				t.Fatalf("first connection: %q %v", status, err)
			}
			c.CloseWithError(0, "")
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			ec, err := quic.DialAddrEarly(ctx, h3Delay(t, addr, 300*time.Millisecond), tc, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ec.CloseWithError(0, "")
			h3RawControl(t, ec)
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
				st.Write(h3RawHeaders(fields...))
				st.Close()
				ch := make(chan answer, 1)
				go func() {
					s, b, err := h3RawResponse(st)
					ch <- answer{s, b, err}
				}()
				return ch
			}
			get := ask(h3RawGet("GET", "/")...)
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

// TestH3StopListener: a socket stopped by a reload (StopListener) stops
// accepting, sends its connections GOAWAY and lets the request in flight
// finish; ServeHTTP3 then returns ErrListenerStopped.
func TestH3StopListener(t *testing.T) {
	testenv.CheckGoroutines(t)
	p := newPKI(t)
	st, err := edgetls.New(edgetls.Options{Certificates: certFiles(p.a)})
	if err != nil {
		t.Fatal(err)
	}
	h := newBlockHandler()
	s := New(Options{Handler: h})
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP3(pc, st.QUICConfig(), HTTP3Options{}) }()
	defer s.Close()
	c := h3RawDial(t, pc.LocalAddr().String(), h3RawTLS(p), nil)
	goaway := h3WatchGoaway(t, c)
	qs, _ := c.OpenStream()
	qs.Write(h3RawHeaders(h3RawGet("GET", "/block")...))
	qs.Close()
	<-h.started
	if !s.StopListener(pc) {
		t.Fatal("StopListener: not served")
	}
	select {
	case <-goaway:
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY after StopListener")
	}
	close(h.release)
	if status, body, err := h3RawResponse(qs); status != "200" || string(body) != "released" {
		t.Fatalf("the request in flight: %q %q %v", status, body, err)
	}
	select {
	case err := <-done:
		if err != ErrListenerStopped {
			t.Fatalf("ServeHTTP3 returned %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeHTTP3 still running")
	}
}

// h3WatchGoaway reads the server's control stream and reports the stream
// ID of its GOAWAY.
func h3WatchGoaway(t *testing.T, c *quic.Conn) chan uint64 {
	goaway := make(chan uint64, 1)
	go func() {
		st, err := c.AcceptUniStream(context.Background())
		if err != nil {
			return
		}
		var fr h3Reader
		fr.reset(st)
		var typ [1]byte
		io.ReadFull(st, typ[:])
		for {
			ft, length, err := fr.next()
			if err != nil {
				return
			}
			pl := make([]byte, length)
			if fr.payloadInto(pl) != nil {
				return
			}
			if ft == h3FrameGoaway {
				id, _, _ := quicvarint.Parse(pl)
				goaway <- id
				return
			}
		}
	}()
	return goaway
}

// TestH3StartDrain: StartDrain sends GOAWAY to an open HTTP/3 connection
// at once; a connection opened during the drain is served its first
// request and then gets GOAWAY (as HTTP/2's), so that a client that
// reconnects is answered instead of sent round in a loop.
func TestH3StartDrain(t *testing.T) {
	s, p, addr := startH3(t, HandlerFunc(func(w *ResponseWriter, r *Request) { w.WriteString("ok") }), Options{}, HTTP3Options{})
	old := h3RawDial(t, addr, h3RawTLS(p), nil)
	oldGoaway := h3WatchGoaway(t, old)
	if status, _, err := h3RawRequest(t, old, nil, h3RawGet("GET", "/")...); status != "200" {
		t.Fatalf("before the drain: %q %v", status, err)
	}
	s.StartDrain()
	select {
	case id := <-oldGoaway:
		if id != 4 {
			t.Errorf("GOAWAY names stream %d, want 4", id)
		}
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY for the open connection")
	}
	fresh := h3RawDial(t, addr, h3RawTLS(p), nil)
	freshGoaway := h3WatchGoaway(t, fresh)
	if status, body, err := h3RawRequest(t, fresh, nil, h3RawGet("GET", "/")...); status != "200" || string(body) != "ok" {
		t.Fatalf("a connection opened during the drain: %q %q %v", status, body, err)
	}
	select {
	case id := <-freshGoaway:
		if id != 4 {
			t.Errorf("GOAWAY names stream %d, want 4", id)
		}
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY after the first stream of a connection opened during the drain")
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
	h3RawControl(t, c)
	_, before, err := h3RawRequest(t, c, nil, h3RawGet("GET", "/")...)
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
	status, after, err := h3RawRequest(t, c, nil, h3RawGet("GET", "/")...)
	if err != nil || status != "200" {
		t.Fatalf("after the move: %q %v", status, err)
	}
	if string(after) == string(before) || string(after) != sock.LocalAddr().String() {
		t.Fatalf("served from %s before and %s after the move to %s", before, after, sock.LocalAddr())
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
		h3RawControl(t, c)
		if status, _, err := h3RawRequest(t, c, nil, h3RawGet("GET", "/")...); status != "200" {
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
	first := h3RawDial(t, addr, h3RawTLS(p), nil)
	if status, _, err := h3RawRequest(t, first, nil, h3RawGet("GET", "/")...); status != "200" {
		t.Fatalf("first connection: %q %v", status, err)
	}
	second := h3RawDial(t, addr, h3RawTLS(p), nil)
	if status, _, err := h3RawRequest(t, second, nil, h3RawGet("GET", "/")...); err == nil || status != "" {
		t.Fatalf("a second connection from the address was served: %q %v", status, err)
	}
	first.CloseWithError(0, "")
	deadline := time.Now().Add(testTimeout)
	for {
		third := h3RawDial(t, addr, h3RawTLS(p), nil)
		status, _, _ := h3RawRequest(t, third, nil, h3RawGet("GET", "/")...)
		third.CloseWithError(0, "")
		if status == "200" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slot did not come back after the first connection ended")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
