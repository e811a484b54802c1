package server

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/access"
	"github.com/simdedge/simdedge/server/proxyproto"
)

// whoami answers "remote=<RemoteIP> client=<ClientIP>"; inline for
// /in (the loop serves it), on goroutines otherwise (the loop hands the
// connection off, which must keep the PROXY address).
type whoami struct{}

func (whoami) ServeEdge(w *ResponseWriter, r *Request) {
	w.WriteString("remote=" + string(r.RemoteIP()) + " client=" + r.ClientIP().String())
	if txt := string(r.ClientIPText()); txt != r.ClientIP().String() {
		w.WriteString(" text=" + txt) // ClientIPText ({client_ip}) disagrees
	}
}

func (h whoami) InlineHandler(r *Request) Handler {
	if strings.HasPrefix(string(r.Target()), "/in") {
		return h
	}
	return nil
}

const policyTimeout = 10 * time.Second

func startPolicyServer(t *testing.T, trusted string, pol ListenerPolicy, tlsConf *tls.Config) string {
	t.Helper()
	var tp *access.Prefixes
	if trusted != "" {
		tp = access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix(trusted)})
	}
	s := New(Options{Handler: whoami{}, TrustedProxies: tp, Timeouts: Timeouts{ReadHeader: 2 * time.Second}})
	l := testnet.Listen(t)
	pl := WithPolicy(l, pol)
	if tlsConf != nil {
		go s.ServeTLS(pl, testEngine, TLSOptions{Config: tlsConf})
	} else {
		go s.ServeTCP(pl, testEngine)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), policyTimeout)
		defer cancel()
		s.Shutdown(ctx)
	})
	return l.Addr().String()
}

func ppDial(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: policyTimeout}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(policyTimeout))
	t.Cleanup(func() { c.Close() })
	return c
}

// ppExchange sends the pieces (with a pause between them, to split the
// header across reads) and returns the body of the answer, or "" when
// the connection was closed without one.
func ppExchange(t *testing.T, c net.Conn, pieces ...string) string {
	t.Helper()
	for i, p := range pieces {
		if i > 0 {
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := io.WriteString(c, p); err != nil {
			return ""
		}
	}
	b, _ := io.ReadAll(c)
	s := string(b)
	if i := strings.Index(s, "\r\n\r\n"); i >= 0 {
		return s[i+4:]
	}
	return s
}

const closeReq = "GET /in HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"
const closeReqGo = "GET /go HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"

// TestProxyProtocol: a PROXY listener takes v1 and v2 headers from trusted
// peers only, and the header's source is the client's address on the
// loop, after a hand-off and on goroutines; a trusted peer without a
// header and an untrusted one with a header are closed; the listener's
// rules apply to the header's address.
func TestProxyProtocol(t *testing.T) {
	addr := startPolicyServer(t, "127.0.0.1/32", ListenerPolicy{ProxyProtocol: true,
		Rules: access.Rules{Deny: access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("192.0.2.66/32")})}}, nil)
	v1 := "PROXY TCP4 192.0.2.9 127.0.0.1 4711 80\r\n"
	v2 := string(proxyproto.AppendV2(nil, netip.MustParseAddrPort("[2001:db8::9]:1"), netip.MustParseAddrPort("[2001:db8::1]:80")))
	local := string(proxyproto.AppendV2(nil, netip.AddrPort{}, netip.AddrPort{}))
	for _, tc := range []struct {
		name, src string
		pieces    []string
		want      string
	}{
		{"v1 inline", "127.0.0.1", []string{v1 + closeReq}, "remote=192.0.2.9 client=192.0.2.9"},
		{"v1 hand-off", "127.0.0.1", []string{v1 + closeReqGo}, "remote=192.0.2.9 client=192.0.2.9"},
		{"v1 split", "127.0.0.1", []string{v1[:9], v1[9:30], v1[30:] + closeReq}, "remote=192.0.2.9 client=192.0.2.9"},
		{"v2 inline", "127.0.0.1", []string{v2 + closeReq}, "remote=2001:db8::9 client=2001:db8::9"},
		{"v2 split", "127.0.0.1", []string{v2[:13], v2[13:] + closeReqGo}, "remote=2001:db8::9 client=2001:db8::9"},
		{"v2 local", "127.0.0.1", []string{local + closeReq}, "remote=127.0.0.1 client=127.0.0.1"},
		// The header's client is not a trusted proxy: its
		// X-Forwarded-For is not believed.
		{"v1 xff", "127.0.0.1", []string{v1 + "GET /in HTTP/1.1\r\nHost: h\r\nX-Forwarded-For: 198.51.100.1\r\nConnection: close\r\n\r\n"}, "remote=192.0.2.9 client=192.0.2.9"},
		{"trusted without header", "127.0.0.1", []string{closeReq}, ""},
		{"untrusted with header", "127.0.0.2", []string{v1 + closeReq}, ""},
		{"untrusted without header", "127.0.0.2", []string{closeReq}, "remote=127.0.0.2 client=127.0.0.2"},
		{"denied by the listener", "127.0.0.1", []string{"PROXY TCP4 192.0.2.66 127.0.0.1 1 80\r\n" + closeReq}, ""},
		{"malformed", "127.0.0.1", []string{"PROXY TCP4 nonsense\r\n" + closeReq}, ""},
	} {
		got := ppExchange(t, ppDial(t, tc.src, addr), tc.pieces...)
		if got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestClientIPText: behind a trusted peer the client named by
// X-Forwarded-For is ClientIP, and ClientIPText ({client_ip} in templates)
// spells the same address, on the loop and on goroutines.
func TestClientIPText(t *testing.T) {
	addr := startPolicyServer(t, "127.0.0.1/32", ListenerPolicy{}, nil)
	for _, path := range []string{"/in", "/go"} {
		for xff, want := range map[string]string{
			"198.51.100.7, 127.0.0.1": "remote=127.0.0.1 client=198.51.100.7",
			"2001:db8::7":             "remote=127.0.0.1 client=2001:db8::7",
			"":                        "remote=127.0.0.1 client=127.0.0.1",
		} {
			req := "GET " + path + " HTTP/1.1\r\nHost: h\r\nConnection: close\r\n"
			if xff != "" {
				req += "X-Forwarded-For: " + xff + "\r\n"
			}
			got := ppExchange(t, ppDial(t, "127.0.0.1", addr), req+"\r\n")
			if got != want {
				t.Errorf("%s, X-Forwarded-For %q: %q, want %q", path, xff, got, want)
			}
		}
	}
}

// TestProxyProtocolTimeout: a trusted peer that sends part of a header and
// stops is closed by the ReadHeader timeout.
func TestProxyProtocolTimeout(t *testing.T) {
	addr := startPolicyServer(t, "127.0.0.1/32", ListenerPolicy{ProxyProtocol: true}, nil)
	c := ppDial(t, "127.0.0.1", addr)
	start := time.Now()
	if got := ppExchange(t, c, "PROXY TCP4 192.0.2.9"); got != "" {
		t.Fatalf("answered %q", got)
	}
	if d := time.Since(start); d > policyTimeout-time.Second {
		t.Fatalf("closed after %v", d)
	}
}

// TestProxyProtocolTLS: on a TLS listener the header comes before the
// ClientHello.
func TestProxyProtocolTLS(t *testing.T) {
	ca := testcert.NewCA(t, "edge CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	addr := startPolicyServer(t, "127.0.0.1/32", ListenerPolicy{ProxyProtocol: true},
		&tls.Config{Certificates: []tls.Certificate{leaf.TLS}})
	for _, path := range []string{"/in", "/go"} {
		c := ppDial(t, "127.0.0.1", addr)
		if _, err := io.WriteString(c, "PROXY TCP4 192.0.2.9 127.0.0.1 4711 443\r\n"); err != nil {
			t.Fatal(err)
		}
		tc := tls.Client(c, &tls.Config{RootCAs: ca.Pool, ServerName: "edge.example"})
		got := ppExchange(t, tc, "GET "+path+" HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
		if got != "remote=192.0.2.9 client=192.0.2.9" {
			t.Errorf("%s: %q", path, got)
		}
	}
}

// TestListenerRules: without PROXY, a denied peer is closed at accept,
// before anything is read; others are served.
func TestListenerRules(t *testing.T) {
	addr := startPolicyServer(t, "", ListenerPolicy{Rules: access.Rules{
		Allow: access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("127.0.0.0/30")}),
		Deny:  access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("127.0.0.3/32")})}}, nil)
	for src, want := range map[string]string{
		"127.0.0.1": "remote=127.0.0.1 client=127.0.0.1",
		"127.0.0.3": "", // deny wins over allow
		"127.0.0.5": "", // not allowed
	} {
		if got := ppExchange(t, ppDial(t, src, addr), closeReq); got != want {
			t.Errorf("%s: %q, want %q", src, got, want)
		}
	}
}

// TestProxyProtocolPerIP: on a PROXY listener the per-address cap counts
// the clients the headers name, not the balancer that carries them all.
func TestProxyProtocolPerIP(t *testing.T) {
	tp := access.NewPrefixes([]netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")})
	s := New(Options{Handler: whoami{}, TrustedProxies: tp, Limits: Limits{MaxConns: 100, MaxConnsPerIP: 2}})
	l := testnet.Listen(t)
	go s.ServeTCP(WithPolicy(l, ListenerPolicy{ProxyProtocol: true}), testEngine)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), policyTimeout)
		defer cancel()
		s.Shutdown(ctx)
	})
	// open sends a header naming client and one keep-alive request, and
	// reports whether it was answered (the connection stays open).
	open := func(client string) bool {
		c := ppDial(t, "127.0.0.1", l.Addr().String())
		io.WriteString(c, "PROXY TCP4 "+client+" 127.0.0.1 1000 80\r\nGET /in HTTP/1.1\r\nHost: h\r\n\r\n")
		buf := make([]byte, 512)
		n, _ := c.Read(buf)
		return strings.Contains(string(buf[:n]), "remote="+client)
	}
	for i, tc := range []struct {
		client string
		want   bool
	}{
		{"192.0.2.9", true}, {"192.0.2.9", true}, {"192.0.2.9", false}, // the third of one client is refused
		{"192.0.2.10", true}, {"192.0.2.10", true}, {"192.0.2.11", true}, // five from one balancer
	} {
		if got := open(tc.client); got != tc.want {
			t.Errorf("connection %d for %s: served %v, want %v", i, tc.client, got, tc.want)
		}
	}
}
