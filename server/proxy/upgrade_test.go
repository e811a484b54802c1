package proxy

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/edgetls"
	"github.com/simdedge/simdedge/server/internal/servetest"
)

// tunnelBackend is a raw upstream that answers an upgrade request with 101
// and the bytes "hello" in the same write, then echoes what it reads until
// EOF, then writes "bye" and closes. A request without Upgrade gets 400 (as
// a WebSocket server answers a handshake that lost its Upgrade field), and
// "GET /no" gets 426 with a body, kept alive.
type tunnelBackend struct {
	addr string
	mu   sync.Mutex
	// heads are the request heads received.
	heads []string
}

func startTunnelBackend(t *testing.T) *tunnelBackend {
	t.Helper()
	l := testnet.Listen(t)
	return serveTunnelBackend(t, l)
}

// serveTunnelBackend serves the tunnel backend on l (plain, or a TLS
// listener: an https upstream).
func serveTunnelBackend(t *testing.T, l net.Listener) *tunnelBackend {
	t.Helper()
	b := &tunnelBackend{addr: l.Addr().String()}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				b.serve(c)
			}()
		}
	}()
	return b
}

func (b *tunnelBackend) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.heads)
}

func (b *tunnelBackend) lastHead() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.heads) == 0 {
		return ""
	}
	return b.heads[len(b.heads)-1]
}

func (b *tunnelBackend) serve(c net.Conn) {
	c.SetDeadline(time.Now().Add(testTimeout))
	br := bufio.NewReader(c)
	for {
		var head strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		h := head.String()
		b.mu.Lock()
		b.heads = append(b.heads, h)
		b.mu.Unlock()
		lower := strings.ToLower(h)
		switch {
		case strings.HasPrefix(h, "GET /no "):
			io.WriteString(c, "HTTP/1.1 426 Upgrade Required\r\nContent-Length: 4\r\n\r\nnope")
			continue
		case !strings.Contains(lower, "\r\nupgrade: websocket") || !strings.Contains(lower, "\r\nconnection: upgrade"):
			io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 10\r\n\r\nno upgrade")
			continue
		}
		io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: abc\r\n\r\nhello")
		if strings.HasPrefix(h, "GET /quiet ") {
			io.Copy(io.Discard, br) // never answers: the idle test
			return
		}
		io.Copy(c, br) // echo, buffered bytes first, until the client's FIN
		io.WriteString(c, "bye")
		return
	}
}

const wsHandshake = "GET /ws HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n" +
	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

// readHeadString reads a response head from br.
func readHeadString(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var sb strings.Builder
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading head %q: %v", sb.String(), err)
		}
		sb.WriteString(line)
		if line == "\r\n" {
			return sb.String()
		}
	}
}

// checkTunnel runs the exchange over c (plain or TLS): the handshake and
// an early frame in one write, the 101 with the backend's early bytes,
// echoes, then a half-close from the client and the backend's last word.
func checkTunnel(t *testing.T, c net.Conn, b *tunnelBackend) {
	t.Helper()
	c.SetDeadline(time.Now().Add(testTimeout))
	if _, err := io.WriteString(c, wsHandshake+"early|"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	head := readHeadString(t, br)
	if !strings.HasPrefix(head, "HTTP/1.1 101 ") || !strings.Contains(head, "\r\nUpgrade: websocket\r\n") ||
		!strings.Contains(head, "\r\nConnection: upgrade\r\n") || !strings.Contains(head, "\r\nSec-WebSocket-Accept: abc\r\n") {
		t.Fatalf("head %q, want a 101 with Upgrade, Connection and the backend's fields", head)
	}
	got := make([]byte, len("helloearly|"))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "helloearly|" {
		t.Fatalf("read %q %v, want the backend's early bytes, then the client's early frame echoed", got, err)
	}
	bh := b.lastHead()
	if !strings.Contains(bh, "\r\nUpgrade: websocket\r\n") || !strings.Contains(bh, "\r\nConnection: upgrade\r\n") ||
		strings.Contains(bh, "keep-alive") {
		t.Fatalf("backend got %q, want Upgrade and Connection: upgrade only", bh)
	}
	for i := range 50 {
		msg := strings.Repeat(string(rune('a'+i%26)), 1+i*997)
		if _, err := io.WriteString(c, msg); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(msg))
		if _, err := io.ReadFull(br, got); err != nil || string(got) != msg {
			t.Fatalf("echo %d: %d bytes, %v", i, len(got), err)
		}
	}
	// Half-close: the client ends its side; the backend still answers.
	switch cw := c.(type) {
	case *net.TCPConn:
		cw.CloseWrite()
	case *tls.Conn:
		cw.CloseWrite()
	}
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "bye" {
		t.Fatalf("after half-close read %q %v, want \"bye\" then EOF", rest, err)
	}
}

// TestUpgradeWebSocketTunnel: a WebSocket handshake goes through the proxy
// with its Upgrade field, the 101 comes back, and the connection relays
// bytes both ways, bytes buffered past either head included, with a
// half-close passed on. Before the tunnel the proxy stripped Upgrade and
// the backend answered 400.
func TestUpgradeWebSocketTunnel(t *testing.T) {
	testenv.CheckGoroutines(t)
	b := startTunnelBackend(t)
	addr, _ := startProxy(t, UpstreamOptions{Name: "ws", Targets: []string{b.addr}}, server.Options{})
	for range 3 {
		c, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		checkTunnel(t, c, b)
		c.Close()
	}
}

// TestUpgradeTunnelTLS: the same over TLS terminated by the server, on
// the engine under test (on the loop, a loop-driven TLS connection that
// the loop hands to a goroutine for the tunnel).
func TestUpgradeTunnelTLS(t *testing.T) {
	testenv.CheckGoroutines(t)
	b := startTunnelBackend(t)
	ca := testcert.NewCA(t, "tunnel CA")
	leaf := ca.Leaf(t, "a", []string{"a.example"}, time.Time{}, time.Time{})
	st, err := edgetls.New(edgetls.Options{Certificates: []edgetls.CertFiles{{Cert: leaf.CertFile, Key: leaf.KeyFile}}})
	if err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t, UpstreamOptions{Targets: []string{b.addr}})
	s := server.New(server.Options{Handler: New(up, Options{}), LoopProxy: testLoopProxy})
	addr := servetest.ServeTLS(t, s, testEngine, server.TLSOptions{Config: st.TLSConfig(), HandshakeTimeout: st.HandshakeTimeout()})
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", addr,
		&tls.Config{ServerName: "a.example", RootCAs: ca.Pool})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkTunnel(t, c, b)
}

// TestUpgradeRefusedOrIgnored: an Upgrade to a protocol the route does not
// allow gets 403 and never reaches the backend; h2c alone and an HTTP/1.0
// Upgrade are ignored (forwarded as plain requests, without the field); a
// route that allows only "foo" refuses websocket; a non-101 answer to an
// upgrade is relayed as a normal response on a kept-alive connection.
func TestUpgradeRefusedOrIgnored(t *testing.T) {
	testenv.CheckGoroutines(t)
	b := startTunnelBackend(t)
	addr, _ := startProxy(t, UpstreamOptions{Name: "ws", Targets: []string{b.addr}}, server.Options{})
	c := testnet.Dial(t, addr, testTimeout)
	br := bufio.NewReader(c)
	ask := func(req string) (*http.Response, string) {
		t.Helper()
		if _, err := io.WriteString(c, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	n := b.count()
	if resp, body := ask("GET /x HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: foo/1\r\n\r\n"); resp.StatusCode != 403 {
		t.Fatalf("Upgrade: foo got %d %q, want 403", resp.StatusCode, body)
	}
	if b.count() != n {
		t.Fatalf("a refused upgrade reached the backend")
	}
	resp, body := ask("GET /x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n")
	if resp.StatusCode != 400 || body != "no upgrade" || strings.Contains(strings.ToLower(b.lastHead()), "upgrade") {
		t.Fatalf("h2c got %d %q, backend saw %q; want it forwarded without Upgrade", resp.StatusCode, body, b.lastHead())
	}
	resp, body = ask("GET /no HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n")
	if resp.StatusCode != 426 || body != "nope" {
		t.Fatalf("non-101 answer relayed as %d %q, want 426 \"nope\"", resp.StatusCode, body)
	}
	if resp, body := ask("GET /x HTTP/1.0\r\nHost: x\r\nConnection: upgrade, keep-alive\r\nUpgrade: websocket\r\n\r\n"); resp.StatusCode != 400 || body != "no upgrade" {
		t.Fatalf("HTTP/1.0 upgrade got %d %q, want it forwarded without Upgrade", resp.StatusCode, body)
	}

	up, err := NewUpstream(UpstreamOptions{Targets: []string{b.addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	p := New(up, Options{Upgrades: []string{"foo"}})
	if !p.allowsUpgrade([]byte("FOO")) || p.allowsUpgrade([]byte("websocket")) {
		t.Fatalf("Upgrades: [foo] allows %v", p.upgrades)
	}
}

// TestTunnelIdle: a tunnel in which nothing moves either way ends after
// Timeouts.TunnelIdle; one with bytes moving one way only stays open past
// it.
func TestTunnelIdle(t *testing.T) {
	testenv.CheckGoroutines(t)
	b := startTunnelBackend(t)
	const idle = 400 * time.Millisecond
	addr, _ := startProxy(t, UpstreamOptions{Name: "ws", Targets: []string{b.addr}},
		server.Options{Timeouts: server.Timeouts{TunnelIdle: idle}})
	open := func(path string) (net.Conn, *bufio.Reader) {
		c, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(testTimeout))
		io.WriteString(c, strings.Replace(wsHandshake, "/ws", path, 1))
		br := bufio.NewReader(c)
		if h := readHeadString(t, br); !strings.HasPrefix(h, "HTTP/1.1 101 ") {
			t.Fatalf("head %q", h)
		}
		got := make([]byte, 5)
		if _, err := io.ReadFull(br, got); err != nil {
			t.Fatal(err)
		}
		return c, br
	}
	// One way only: the client sends, the quiet backend never answers.
	c1, br1 := open("/quiet")
	start := time.Now()
	for time.Since(start) < 3*idle {
		if _, err := io.WriteString(c1, "x"); err != nil {
			t.Fatalf("tunnel with client traffic closed after %v: %v", time.Since(start), err)
		}
		time.Sleep(idle / 4)
	}
	// Silence both ways: the tunnel ends.
	c2, br2 := open("/quiet")
	start = time.Now()
	if _, err := br2.ReadByte(); err == nil {
		t.Fatal("idle tunnel sent a byte")
	}
	if d := time.Since(start); d < idle/2 || d > testTimeout/2 {
		t.Fatalf("idle tunnel ended after %v, want about %v", d, idle)
	}
	_ = c2
	// And the first one ends once its client falls silent.
	if _, err := br1.ReadByte(); err == nil {
		t.Fatal("quiet tunnel sent a byte")
	}
}

// TestTunnelIdleOff: with tunnel_idle disabled (negative), a quiet tunnel
// outlives the deadlines of the HTTP exchange before it (here a short
// read_header).
func TestTunnelIdleOff(t *testing.T) {
	testenv.CheckGoroutines(t)
	b := startTunnelBackend(t)
	const header = 300 * time.Millisecond
	addr, _ := startProxy(t, UpstreamOptions{Name: "ws", Targets: []string{b.addr}, ResponseHeaderTimeout: header},
		server.Options{Timeouts: server.Timeouts{TunnelIdle: -1, ReadHeader: header}})
	c := testnet.Dial(t, addr, testTimeout)
	io.WriteString(c, wsHandshake)
	br := bufio.NewReader(c)
	if h := readHeadString(t, br); !strings.HasPrefix(h, "HTTP/1.1 101 ") {
		t.Fatalf("head %q", h)
	}
	got := make([]byte, len("hello"))
	if _, err := io.ReadFull(br, got); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * header)
	io.WriteString(c, "still")
	got = make([]byte, len("still"))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "still" {
		t.Fatalf("after %v quiet: %q %v, want the echo", 3*header, got, err)
	}
}

// TestUpgradeTunnelHTTPSUpstream: the tunnel to an https upstream runs
// over the upstream's tls.Conn, its half-close a close_notify.
func TestUpgradeTunnelHTTPSUpstream(t *testing.T) {
	testenv.CheckGoroutines(t)
	ca := testcert.NewCA(t, "tunnel upstream CA")
	leaf := ca.Leaf(t, "up", []string{"up.example"}, time.Time{}, time.Time{})
	l, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{leaf.TLS}})
	if err != nil {
		t.Fatal(err)
	}
	b := serveTunnelBackend(t, l)
	addr, _ := startProxy(t, UpstreamOptions{Name: "wss", Targets: []string{b.addr},
		TLS: &tls.Config{RootCAs: ca.Pool, ServerName: "up.example"}}, server.Options{})
	c, err := net.DialTimeout("tcp", addr, testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	checkTunnel(t, c, b)
}

// TestUpgradeRefusedByTargets: targets that cannot tunnel an HTTP/1.1
// upgrade (HTTP/2 ones) refuse it with 403 instead of forwarding a request
// the backend would fail.
func TestUpgradeRefusedByTargets(t *testing.T) {
	testenv.CheckGoroutines(t)
	o := startH2Origin(t, false)
	addr, _ := startH2Proxy(t, []string{o.addr}, o)
	c := testnet.Dial(t, addr, testTimeout)
	io.WriteString(c, wsHandshake)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 403 {
		t.Fatalf("websocket to an h2 upstream got %d, want 403", resp.StatusCode)
	}
}
