package xdp

import (
	"context"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/simdedge/simdedge/internal/h3test"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/metrics"
	"github.com/simdedge/simdedge/xdp/xdptest"
)

// The floods of server's kernel-UDP tests (h3admit_test.go,
// h3attack_test.go, h3silent_test.go), run on the AF_XDP PacketConn,
// with the same clients (internal/h3test), and what they must not grow
// here: the PacketConn's peer table.

// floodHandler answers / with "ok"; holds /block until the client goes
// or release, counting how many are held at once; writes /big (8 MiB) in
// 64 KiB pieces; and trickles /trickle, 1 KiB every trickleEvery, until
// stop.
type floodHandler struct {
	running, peak atomic.Int32
	started       chan struct{}
	release, stop chan struct{}
	wrote         atomic.Int64
	bigDone       chan struct{}
}

const (
	floodBig     = 8 << 20
	trickleEvery = 2 * time.Millisecond
)

func newFloodHandler() *floodHandler {
	return &floodHandler{started: make(chan struct{}, 1000), release: make(chan struct{}),
		stop: make(chan struct{}), bigDone: make(chan struct{}, 1)}
}

func (h *floodHandler) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	switch string(r.Target()) {
	case "/block":
		n := h.running.Add(1)
		defer h.running.Add(-1)
		for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
		}
		gone := make(chan struct{})
		r.OnStreamGone(func() { close(gone) })
		h.started <- struct{}{}
		select {
		case <-gone:
		case <-h.release:
			w.WriteString("released")
		case <-time.After(h3Timeout):
		}
	case "/big":
		defer func() { h.bigDone <- struct{}{} }()
		piece := make([]byte, 64<<10)
		for range floodBig / len(piece) {
			if _, err := w.Write(piece); err != nil {
				return
			}
			h.wrote.Add(int64(len(piece)))
		}
	case "/trickle":
		piece := []byte(strings.Repeat("t", 1<<10))
		tick := time.NewTicker(trickleEvery)
		defer tick.Stop()
		for end := time.After(h3Timeout); ; {
			select {
			case <-tick.C:
				if _, err := w.Write(piece); err != nil {
					return
				}
				w.Flush()
				continue
			case <-h.stop:
			case <-end:
			}
			w.WriteString("end")
			return
		}
	default:
		w.WriteString("ok")
	}
}

// servedPromptly: a new quic-go client is answered within half the test's
// timeout (a liveness bound, not a speed).
func (e *h3Env) servedPromptly(t *testing.T, what string) {
	t.Helper()
	start := time.Now()
	resp, b, err := h3Get(e.client(t), "GET", e.base+"/", nil)
	if err != nil || resp.StatusCode != 200 || string(b) != "ok" {
		t.Fatalf("a new client %s: %v %q", what, err, b)
	}
	if d := time.Since(start); d > h3Timeout/2 {
		t.Errorf("a new client %s took %v", what, d)
	}
}

// listenClient opens a UDP socket of the client namespace on a port of
// its own.
func listenClient(v *xdptest.Veth) func() (*net.UDPConn, error) {
	return func() (c *net.UDPConn, err error) {
		err = xdptest.InNS(v.ClientNS, func() (err error) {
			c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4zero})
			return err
		})
		return c, err
	}
}

// TestHTTP3RetryFloodOverXDP: Initials from many source ports that never
// finish their handshakes push the handshakes in flight past
// RetryThreshold; from then on they get Retries, stateless, and a new
// client (which answers its Retry) is served promptly (TestH3Retry on the
// AF_XDP PacketConn). Then 20,000 Initials forged from as many source
// ports meet Retry while an established client's download finishes.
func TestHTTP3RetryFloodOverXDP(t *testing.T) {
	const threshold, flood = 4, 64
	testenv.CheckGoroutines(t)
	v := xdptest.NewVeth(t)
	set := metrics.NewSet()
	e := serveHTTP3(t, v, Native, nil, server.Options{Handler: newFloodHandler(), Metrics: set}, server.HTTP3Options{RetryThreshold: threshold})
	retriesSent := func() uint64 { return set.Listener(e.pc.LocalAddr().String()).Totals().HTTP3[metrics.H3Retry] }
	initials := h3test.CaptureInitials(t, h3test.TLS(e.ca.Pool), flood)
	handshakes, retries := h3test.SendInitials(t, listenClient(v), e.addr, initials)
	if handshakes < threshold || retries < flood-threshold-1 {
		t.Fatalf("%d handshakes began and %d Retries of %d Initials, threshold %d", handshakes, retries, flood, threshold)
	}
	e.servedPromptly(t, "after the Initial flood")

	// Then the same Initials from forged source ports, as fast as the
	// raw socket sends them, while an established client downloads: the
	// Retries take the TX frames the download needs, and the download
	// must still finish.
	sp, err := v.NewSpoofer()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	c := e.client(t)
	if _, _, err := h3Get(c, "GET", e.base+"/", nil); err != nil {
		t.Fatal(err)
	}
	type result struct {
		n   int
		err error
	}
	got := make(chan result, 1)
	go func() {
		_, b, err := h3Get(c, "GET", e.base+"/big", nil)
		got <- result{len(b), err}
	}()
	before, _ := e.l.Stats()
	retried := retriesSent()
	const spoofed = 20000
	for i := range spoofed {
		if err := sp.Send(v.ClientIP, uint16(1024+i), v.ServerIP, testUDPPort, initials[i%len(initials)]); err != nil {
			t.Fatalf("forged Initial %d: %v", i, err)
		}
	}
	r := <-got
	after, _ := e.l.Stats()
	if r.err != nil || r.n != floodBig {
		t.Errorf("a download during the forged flood: %v after %d bytes (TX full %d times)", r.err, r.n, after.TXFull-before.TXFull)
	}
	// Those that reached the PacketConn (the kernel drops some while the
	// RX ring is full) were met with Retry, not a handshake (the count is
	// of Retry decisions: quic-go drops the Retry itself when its queue
	// of them is full, as a stateless server may).
	if n := retriesSent() - retried; n < (after.Received-before.Received)/4 {
		t.Errorf("%d Retries for %d frames received during the forged flood", n, after.Received-before.Received)
	}
	t.Logf("forged flood: %d frames received, %d sent, %d Retries, TX full %d times, %d dropped", after.Received-before.Received,
		after.Sent-before.Sent, retriesSent()-retried, after.TXFull-before.TXFull, after.Dropped-before.Dropped)
	e.servedPromptly(t, "after the forged Initial flood")
}

// TestHTTP3StreamFloodOverXDP: a client may hold MaxStreams requests and
// no more; a flood of streams opened and reset as fast as credit allows
// never runs more than MaxStreams handlers; another client is served
// meanwhile, and the flooding connection afterwards (TestH3StreamLimit on
// the AF_XDP PacketConn).
func TestHTTP3StreamFloodOverXDP(t *testing.T) {
	const limit = 4
	testenv.CheckGoroutines(t)
	v := xdptest.NewVeth(t)
	h := newFloodHandler()
	e := serveHTTP3(t, v, Native, nil, server.Options{Handler: h}, server.HTTP3Options{MaxStreams: limit})
	tc := h3test.TLS(e.ca.Pool)
	dial := func() *quic.Conn { return h3test.DialVia(t, e.transport(t, e.clientSocket(t)), e.addr, tc, nil) }
	h3test.StreamLimit(t, dial(), dial, limit, h.started, &h.peak, h3Timeout)
}

// TestHTTP3SilentPeerOverXDP: a client asks for a large response and then
// acknowledges nothing. A new client is served promptly meanwhile; the
// server gives the silent connection up by its idle timeout (the
// handler's write fails), and then stops sending to it
// (TestH3SilentPeer on the AF_XDP PacketConn).
func TestHTTP3SilentPeerOverXDP(t *testing.T) {
	testenv.CheckGoroutines(t)
	v := xdptest.NewVeth(t)
	h := newFloodHandler()
	e := serveHTTP3(t, v, Native, nil, server.Options{Handler: h}, server.HTTP3Options{IdleTimeout: time.Second})
	mc := &h3test.MuteConn{PacketConn: e.clientSocket(t)}
	// The client would wait far longer than the server: the server's own
	// idle timeout is what must end the connection.
	c := h3test.DialVia(t, e.transport(t, mc), e.addr, h3test.TLS(e.ca.Pool), &quic.Config{MaxIdleTimeout: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), h3Timeout)
	defer cancel()
	st, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st.Write(h3test.Headers(h3test.Get("GET", "/big")...))
	st.Close()
	for deadline := time.Now().Add(h3Timeout); h.wrote.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if h.wrote.Load() == 0 {
		t.Fatal("the large response never started")
	}
	mc.Mute.Store(true)

	e.servedPromptly(t, "beside the silent peer")

	select {
	case <-h.bigDone:
	case <-time.After(h3Timeout):
		t.Fatalf("the handler still writes to a peer silent for %v (%d bytes taken)", h3Timeout, h.wrote.Load())
	}
	if h.wrote.Load() >= floodBig {
		t.Errorf("all %d bytes were taken by a peer that acknowledged none of them after muting", floodBig)
	}
	// Given up, the connection sends no more: the frames sent stop
	// growing (sampled a quarter second apart).
	var last uint64
	quiet := false
	for deadline := time.Now().Add(h3Timeout); !quiet && time.Now().Before(deadline); {
		st, err := e.l.Stats()
		if err != nil {
			t.Fatal(err)
		}
		quiet = st.Sent == last
		last = st.Sent
		time.Sleep(250 * time.Millisecond)
	}
	if !quiet {
		t.Errorf("the server still sends (%d frames) long after giving the silent peer up", last)
	}
}

// peerCount is the size of the PacketConn's table of peers (both
// generations).
func peerCount(c *packetConn) int {
	c.pmu.RLock()
	defer c.pmu.RUnlock()
	return len(c.peers) + len(c.older)
}

// received is the frames the Listener's sockets have received.
func (l *Listener) received() uint64 {
	var n uint64
	for _, q := range l.queues {
		n += q.received.Load()
	}
	return n
}

// TestHTTP3PeerFloodOverXDP: datagrams from half again as many forged
// source addresses as the PacketConn's peer table holds. The table stays
// within maxPeers throughout, while a client that was mid-response keeps
// its connection to the end, and a new client is served promptly.
func TestHTTP3PeerFloodOverXDP(t *testing.T) {
	testenv.CheckGoroutines(t)
	v := xdptest.NewVeth(t)
	h := newFloodHandler()
	e := serveHTTP3(t, v, Native, nil, server.Options{Handler: h}, server.HTTP3Options{})
	sp, err := v.NewSpoofer()
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()

	type result struct {
		b   []byte
		err error
	}
	got := make(chan result, 1)
	c := e.client(t)
	go func() {
		resp, err := c.Get(e.base + "/trickle")
		if err != nil {
			got <- result{nil, err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- result{b, err}
	}()
	// The response is under way before the flood.
	for deadline := time.Now().Add(h3Timeout); peerCount(e.pc) == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(20 * trickleEvery)

	const flood = maxPeers + maxPeers/2
	const batch = 64
	payload := []byte("not quic") // too short for QUIC: dropped after the PacketConn learns its sender
	base := e.l.received()
	most := 0
	for i := 0; i < flood; i++ {
		src := [4]byte{198, 18, 100 + byte(i>>15), 0}
		if err := sp.Send(src, uint16(1024+i&(1<<15-1)), v.ServerIP, testUDPPort, payload); err != nil {
			t.Fatalf("spoofed datagram %d: %v", i, err)
		}
		if i%batch == batch-1 {
			// Pace the flood to what the RX loop takes, so that the
			// datagrams reach the PacketConn rather than a full ring:
			// wait while the receive count lags and still moves (those
			// the kernel dropped never count).
			for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); {
				n := e.l.received()
				if n-base+2*batch >= uint64(i+1) {
					break
				}
				time.Sleep(100 * time.Microsecond)
				if e.l.received() == n {
					break
				}
			}
			most = max(most, peerCount(e.pc))
		}
	}
	close(h.stop)
	if n := e.l.received() - base; n <= maxPeers {
		t.Fatalf("only %d of %d spoofed datagrams arrived: the table was never full", n, flood)
	}
	if most > maxPeers {
		t.Errorf("the peer table held %d senders, cap %d", most, maxPeers)
	}
	select {
	case r := <-got:
		if r.err != nil || !strings.HasSuffix(string(r.b), "end") {
			t.Errorf("the client mid-response during the flood: %v after %d bytes", r.err, len(r.b))
		}
	case <-time.After(h3Timeout):
		t.Fatal("the response did not end")
	}
	e.servedPromptly(t, "after the flood")
	t.Logf("peer table at most %d, now %d; %d datagrams from forged senders", most, peerCount(e.pc), e.l.received()-base)
}
