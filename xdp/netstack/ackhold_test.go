package netstack

import (
	"bufio"
	"bytes"
	"io"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/header"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
)

// isPureACK reports whether frame is a TCP segment with only ACK set and
// no payload.
func isPureACK(frame []byte) bool {
	_, pure, _, ok := tcpSegment(frame)
	return ok && pure
}

// TestKeepAliveOneFramePerRequest: on a keep-alive connection the response
// carries the acknowledgement of the request, so the server sends one
// frame per request, not an ACK and then the response (the frame the
// profile of bench/netstack found costing as much as the response).
func TestKeepAliveOneFramePerRequest(t *testing.T) {
	testenv.CheckGoroutines(t)
	var counting atomic.Bool
	var acks, data atomic.Int64
	tap := func(f []byte) {
		if !counting.Load() {
			return
		}
		if isPureACK(f) {
			acks.Add(1)
		} else {
			data.Add(1)
		}
	}
	// A delay far above the in-memory turnaround, so that the test does
	// not depend on the machine's load.
	p := newPair(t, Config{ACKDelay: time.Second}, tap)
	serve(t, p, echo, server.Options{})
	c := p.mustDial(t)
	br := bufio.NewReader(c)
	const n = 40
	counting.Store(true)
	for i := range n {
		io.WriteString(c, "GET /k HTTP/1.1\r\nHost: x\r\n\r\n")
		if resp, body := readResp(t, br); resp.StatusCode != 200 || body != "GET /k 0" {
			t.Fatalf("request %d: got %d %q", i, resp.StatusCode, body)
		}
	}
	counting.Store(false)
	if a := acks.Load(); a > n/10 {
		t.Errorf("%d pure ACKs and %d data frames for %d requests: want about one frame per request", a, data.Load(), n)
	}
	if m := p.srv.Stats().TxACKsMerged; m < n-n/10 {
		t.Errorf("TxACKsMerged = %d, want about %d", m, n)
	}
}

// TestHeldACKSentAfterDelay: a segment nothing answers (half a request) is
// still acknowledged, once the delay has run out, and the connection goes
// on.
func TestHeldACKSentAfterDelay(t *testing.T) {
	testenv.CheckGoroutines(t)
	var acks atomic.Int64
	var armed atomic.Bool
	tap := func(f []byte) {
		if armed.Load() && isPureACK(f) {
			acks.Add(1)
		}
	}
	p := newPair(t, Config{ACKDelay: 5 * time.Millisecond}, tap)
	serve(t, p, echo, server.Options{})
	c := p.mustDial(t)
	armed.Store(true)
	io.WriteString(c, "GET /half HTTP/1.1\r\n")
	deadline := time.Now().Add(testTimeout)
	for acks.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the half request was never acknowledged")
		}
		time.Sleep(time.Millisecond)
	}
	if d := p.srv.Stats().TxACKsDelayed; d == 0 {
		t.Errorf("TxACKsDelayed = 0 after an unanswered segment's ACK went out")
	}
	io.WriteString(c, "Host: x\r\n\r\n")
	if resp, body := readResp(t, bufio.NewReader(c)); resp.StatusCode != 200 || body != "GET /half 0" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
}

// segFrame builds a TCP segment from the server to peer as the link sees
// it (checksums are not the holder's concern).
func segFrame(peer netip.Addr, rport uint16, flags header.TCPFlags, ack uint32, payload int) []byte {
	f := make([]byte, header.EthernetMinimumSize+header.IPv4MinimumSize+header.TCPMinimumSize+payload)
	header.Ethernet(f).Encode(&header.EthernetFields{SrcAddr: tcpip.LinkAddress(serverMAC), DstAddr: tcpip.LinkAddress(clientMAC), Type: header.IPv4ProtocolNumber})
	ip := header.IPv4(f[header.EthernetMinimumSize:])
	ip.Encode(&header.IPv4Fields{
		TotalLength: uint16(len(f) - header.EthernetMinimumSize), TTL: 64, Protocol: uint8(header.TCPProtocolNumber),
		SrcAddr: tcpip.AddrFrom4(serverAddr.As4()), DstAddr: tcpip.AddrFrom4(peer.As4()),
	})
	header.TCP(ip[header.IPv4MinimumSize:]).Encode(&header.TCPFields{
		SrcPort: testPort, DstPort: rport, AckNum: ack, DataOffset: header.TCPMinimumSize, Flags: flags, WindowSize: 1000,
	})
	return f
}

// TestACKHolderRules checks each rule of ackHolder on crafted frames.
func TestACKHolderRules(t *testing.T) {
	ack := func(n uint32) []byte { return segFrame(clientAddr, 40000, header.TCPFlagAck, n, 0) }
	for _, tc := range []struct {
		name   string
		frames [][]byte
		want   [][]byte // sent, in order, before any timer
	}{
		{"response supersedes", [][]byte{ack(1), segFrame(clientAddr, 40000, header.TCPFlagAck|header.TCPFlagPsh, 1, 5)},
			[][]byte{segFrame(clientAddr, 40000, header.TCPFlagAck|header.TCPFlagPsh, 1, 5)}},
		{"FIN supersedes", [][]byte{ack(1), segFrame(clientAddr, 40000, header.TCPFlagAck|header.TCPFlagFin, 1, 0)},
			[][]byte{segFrame(clientAddr, 40000, header.TCPFlagAck|header.TCPFlagFin, 1, 0)}},
		{"duplicate ACKs all go out", [][]byte{ack(1), ack(1), ack(1)}, [][]byte{ack(1), ack(1)}},
		{"bare RST after the ACK", [][]byte{ack(7), segFrame(clientAddr, 40000, header.TCPFlagRst, 0, 0)},
			[][]byte{ack(7), segFrame(clientAddr, 40000, header.TCPFlagRst, 0, 0)}},
		{"unknown connection: sent at once", [][]byte{segFrame(clientAddr, 40002, header.TCPFlagAck, 1, 0)},
			[][]byte{segFrame(clientAddr, 40002, header.TCPFlagAck, 1, 0)}},
		{"other connections untouched", [][]byte{ack(1), segFrame(clientAddr, 40001, header.TCPFlagAck|header.TCPFlagPsh, 1, 5)},
			[][]byte{segFrame(clientAddr, 40001, header.TCPFlagAck|header.TCPFlagPsh, 1, 5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &recDev{}
			e := newEndpoint(d, serverAddr, 16, time.Hour)
			defer e.detach()
			// The client sent a request on each connection: only
			// then are its ACKs held.
			for _, port := range []uint16{40000, 40001} {
				e.acks.received(flowKey{remote: clientAddr.As4(), rport: port, lport: testPort}, 100)
			}
			for _, f := range tc.frames {
				if err := e.acks.send(f); err != nil {
					t.Fatal(err)
				}
			}
			got := d.await(t, len(tc.want))
			if len(got) != len(tc.want) {
				t.Fatalf("sent %d frames, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.want[i]) {
					t.Errorf("frame %d differs from the expected one", i)
				}
			}
		})
	}
	t.Run("close drops what is held", func(t *testing.T) {
		d := &recDev{}
		e := newEndpoint(d, serverAddr, 16, time.Millisecond)
		e.acks.received(flowKey{remote: clientAddr.As4(), rport: 40000, lport: testPort}, 100)
		e.acks.send(ack(1))
		e.detach()
		time.Sleep(10 * time.Millisecond)
		if n := d.count(); n != 0 {
			t.Errorf("%d frames sent after close, want 0", n)
		}
	})
}

// TestUploadACKsNotHeld: the ACKs of an upload go out at once. Held, they
// would stall a sender that waits for them to send its next flight (RFC
// 5681 §4.2: at least every second full-sized segment is acknowledged).
func TestUploadACKsNotHeld(t *testing.T) {
	testenv.CheckGoroutines(t)
	// A delay long enough that each held ACK would show in the counters
	// and in the test's time.
	p := newPair(t, Config{ACKDelay: 50 * time.Millisecond}, nil)
	serve(t, p, echo, server.Options{})
	c := p.mustDial(t)
	body := bytes.Repeat([]byte("x"), 1<<20)
	io.WriteString(c, "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n")
	if _, err := c.Write(body); err != nil {
		t.Fatal(err)
	}
	if resp, got := readResp(t, bufio.NewReader(c)); resp.StatusCode != 200 || got != "POST /up 1048576" {
		t.Fatalf("got %d %q", resp.StatusCode, got)
	}
	// The last ACK of the body may wait for the response; no other.
	if d := p.srv.Stats().TxACKsDelayed; d > 1 {
		t.Errorf("%d ACKs of the upload were held until their delay ran out, want at most 1", d)
	}
}

// TestBulkACKSentAtOnce: after a full segment's worth of data the ACK goes
// out at once; after a small request it is held.
func TestBulkACKSentAtOnce(t *testing.T) {
	d := &recDev{}
	e := newEndpoint(d, serverAddr, 16, time.Hour)
	defer e.detach()
	k := flowKey{remote: clientAddr.As4(), rport: 40000, lport: testPort}
	ack := segFrame(clientAddr, 40000, header.TCPFlagAck, 1, 0)
	e.acks.received(k, 100)
	e.acks.send(ack)
	if n := d.count(); n != 0 {
		t.Fatalf("the ACK of a 100-byte request went out (%d frames), want it held", n)
	}
	e.acks.send(segFrame(clientAddr, 40000, header.TCPFlagAck|header.TCPFlagPsh, 1, 5)) // the response
	e.acks.received(k, 1000)
	e.acks.received(k, testMTU-40-1000)
	e.acks.send(ack)
	if got := d.await(t, 2); len(got) != 2 || !bytes.Equal(got[1], ack) {
		t.Fatalf("sent %d frames, want the response and then the ACK of a full segment", len(got))
	}
}
