package h3test

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
)

// QUIC v1 long header packet types (RFC 9000 §17.2).
const (
	LongInitial   = 0
	LongHandshake = 2
	LongRetry     = 3
)

// LongType is a QUIC v1 long header's packet type (LongInitial, 1 0-RTT,
// LongHandshake, LongRetry), -1 for a short header.
func LongType(b byte) int {
	if b&0x80 == 0 {
		return -1
	}
	return int(b>>4) & 3
}

// CaptureInitials records the first datagram (an Initial, each with a
// connection ID of its own) of n quic-go dials to a socket that never
// answers: a flood's packets, which a test replays from other addresses.
func CaptureInitials(t testing.TB, tc *tls.Config, n int) [][]byte {
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
			quic.DialAddr(ctx, rec.LocalAddr().String(), tc, nil)
		}()
		buf := make([]byte, 2048)
		rec.SetReadDeadline(time.Now().Add(Timeout))
		m, _, err := rec.ReadFromUDP(buf)
		cancel()
		wg.Wait()
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		if LongType(buf[0]) != LongInitial {
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

// SendInitials sends each Initial from a socket of its own (opened by
// listen, as a flood from spoofed source ports would come) to server, and
// counts the answers that begin a handshake and the Retries.
func SendInitials(t testing.TB, listen func() (*net.UDPConn, error), server *net.UDPAddr, initials [][]byte) (handshakes, retries int) {
	t.Helper()
	buf := make([]byte, 2048)
	for i, pkt := range initials {
		sock, err := listen()
		if err != nil {
			t.Fatal(err)
		}
		sock.WriteToUDP(pkt, server)
		sock.SetReadDeadline(time.Now().Add(Timeout))
		n, _, err := sock.ReadFromUDP(buf)
		sock.Close()
		if err != nil || n == 0 {
			t.Fatalf("initial %d: no answer: %v", i, err)
		}
		switch LongType(buf[0]) {
		case LongRetry:
			retries++
		case LongInitial:
			handshakes++
		}
	}
	return handshakes, retries
}

// MuteConn is a client's UDP socket that can go deaf: once Mute is set it
// drops every datagram it receives, so the client stops acknowledging
// while the server still has data in flight (issue 33's "a peer that
// never acknowledges"). It embeds the socket as a net.PacketConn so that
// quic-go reads through ReadFrom, not the *net.UDPConn's ReadMsgUDP.
type MuteConn struct {
	net.PacketConn // a *net.UDPConn
	Mute           atomic.Bool
}

// SetReadBuffer and SetWriteBuffer pass through, so that quic-go sizes
// the socket's buffers as it would a *net.UDPConn's.
func (c *MuteConn) SetReadBuffer(n int) error  { return c.PacketConn.(*net.UDPConn).SetReadBuffer(n) }
func (c *MuteConn) SetWriteBuffer(n int) error { return c.PacketConn.(*net.UDPConn).SetWriteBuffer(n) }

// ReadFrom drops what arrives while muted.
func (c *MuteConn) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, a, err := c.PacketConn.ReadFrom(b)
		if err != nil || !c.Mute.Load() {
			return n, a, err
		}
	}
}

// RequestCancelled is H3_REQUEST_CANCELLED (RFC 9114 §8.1).
const RequestCancelled = 0x10c

// StreamFlood opens n request streams on c, each as soon as the server's
// stream credit (MAX_STREAMS) allows, writes a request of fields on it
// and resets it at once both ways: handlers are started and abandoned as
// fast as the server lets a client.
func StreamFlood(t testing.TB, c *quic.Conn, n int, fields ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	req := Headers(fields...)
	for i := range n {
		st, err := c.OpenStreamSync(ctx)
		if err != nil {
			t.Fatalf("flood stream %d: %v", i, err)
		}
		st.Write(req)
		st.CancelWrite(RequestCancelled)
		st.CancelRead(RequestCancelled)
	}
}

// StreamLimit checks a server that allows limit request streams on a
// connection, whose handler for GET /block signals started as it begins,
// keeps its running peak in peak and blocks until its stream is reset,
// and answers "ok" to GET /: c may open limit streams and no more (QUIC's
// MAX_STREAMS); another connection (from dial) is served meanwhile; a
// flood of 300 streams opened and reset as fast as credit allows never
// runs more than limit handlers; and c is served afterwards.
func StreamLimit(t testing.TB, c *quic.Conn, dial func() *quic.Conn, limit int32, started <-chan struct{}, peak *atomic.Int32, timeout time.Duration) {
	t.Helper()
	var held []*quic.Stream
	for range limit {
		st, err := c.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write(Headers(Get("GET", "/block")...))
		st.Close()
		held = append(held, st)
	}
	for range limit {
		select {
		case <-started:
		case <-time.After(timeout):
			t.Fatal("handlers did not start")
		}
	}
	if _, err := c.OpenStream(); err == nil {
		t.Fatal("a stream past MaxStreams opened")
	}
	if status, body, err := Request(t, dial(), nil, Get("GET", "/")...); status != "200" || string(body) != "ok" {
		t.Fatalf("another client while the first holds its streams: %q %q %v", status, body, err)
	}
	for _, st := range held {
		st.CancelRead(RequestCancelled)
	}
	StreamFlood(t, c, 300, Get("GET", "/block")...)
	if p := peak.Load(); p > limit {
		t.Fatalf("%d handlers ran at once, limit %d", p, limit)
	}
	if status, body, err := Request(t, c, nil, Get("GET", "/")...); status != "200" || string(body) != "ok" {
		t.Fatalf("after the flood: %q %q %v", status, body, err)
	}
}
