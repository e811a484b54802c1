package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/edgetls"
)

// pki is the test PKI of the TLS tests: a CA with leaves for two names and
// a wildcard, a client certificate, and a second CA whose client
// certificate must be refused.
type pki struct {
	ca, other        *testcert.CA
	a, b, wild       *testcert.Pair
	client, stranger *testcert.Pair
}

func newPKI(t testing.TB) *pki {
	t.Helper()
	ca := testcert.NewCA(t, "simdedge test CA")
	other := testcert.NewCA(t, "other CA")
	var z time.Time
	return &pki{
		ca: ca, other: other,
		a:        ca.Leaf(t, "a", []string{"a.example"}, z, z),
		b:        ca.Leaf(t, "b", []string{"b.example"}, z, z),
		wild:     ca.Leaf(t, "wild", []string{"*.w.example"}, z, z),
		client:   ca.Client(t, "client", "client.example"),
		stranger: other.Client(t, "stranger", "stranger.example"),
	}
}

func certFiles(ps ...*testcert.Pair) []edgetls.CertFiles {
	var out []edgetls.CertFiles
	for _, p := range ps {
		out = append(out, edgetls.CertFiles{Cert: p.CertFile, Key: p.KeyFile})
	}
	return out
}

// tlsHandler answers whether the request came over TLS, and with which SNI.
// It is inline, so that the loop engine answers on the loop itself (its
// TLS path, looptls_linux.go); looptls_test.go covers the hand-off.
func tlsHandler() Handler {
	return Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
		st, ok := r.TLSConnectionState()
		fmt.Fprintf(w, "tls=%v sni=%s ok=%v", r.TLS(), st.ServerName, ok)
	}))
}

// startTLS serves h with TLS from o on the test engine.
func startTLS(t *testing.T, h Handler, o edgetls.Options) (*edgetls.Store, string) {
	t.Helper()
	return startTLSWith(t, h, Options{}, o)
}

// startTLSWith is startTLS with server options so.
func startTLSWith(t *testing.T, h Handler, so Options, o edgetls.Options) (*edgetls.Store, string) {
	t.Helper()
	testenv.CheckGoroutines(t)
	st, err := edgetls.New(o)
	if err != nil {
		t.Fatal(err)
	}
	so.Handler = h
	s := New(so)
	l := testnet.Listen(t)
	serveTLSOn(t, s, l, st)
	return st, l.Addr().String()
}

// serveTLSOn serves l with TLS from st on the test engine until cleanup,
// which shuts s down and checks that ServeTLS returned ErrServerClosed.
func serveTLSOn(t *testing.T, s *Server, l net.Listener, st *edgetls.Store) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		done <- s.ServeTLS(l, testEngine, TLSOptions{Config: st.TLSConfig(), HandshakeTimeout: st.HandshakeTimeout()})
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		s.Shutdown(ctx)
		if err := <-done; err != ErrServerClosed {
			t.Errorf("ServeTLS returned %v", err)
		}
	})
}

func tlsClient(p *pki, cfg *tls.Config) *http.Client {
	if cfg.RootCAs == nil {
		cfg.RootCAs = p.ca.Pool
	}
	return &http.Client{Timeout: testTimeout, Transport: &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: false}}
}

func getTLS(t *testing.T, c *http.Client, addr string) (*http.Response, string, error) {
	t.Helper()
	resp, err := c.Get("https://" + addr + "/")
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// TestTLSVersions: Go clients over TLS 1.2 and 1.3 get answers, the
// request knows it came over TLS, and 1.1 is refused.
func TestTLSVersions(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a)})
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		c := tlsClient(p, &tls.Config{ServerName: "a.example", MinVersion: v, MaxVersion: v})
		resp, body, err := getTLS(t, c, addr)
		if err != nil {
			t.Fatalf("%s: %v", tls.VersionName(v), err)
		}
		if resp.TLS.Version != v || body != "tls=true sni=a.example ok=true" {
			t.Errorf("%s: negotiated %s, body %q", tls.VersionName(v), tls.VersionName(resp.TLS.Version), body)
		}
		if v == tls.VersionTLS12 && !strings.Contains(tls.CipherSuiteName(resp.TLS.CipherSuite), "GCM") && !strings.Contains(tls.CipherSuiteName(resp.TLS.CipherSuite), "CHACHA20") {
			t.Errorf("TLS 1.2 suite %s is not AEAD", tls.CipherSuiteName(resp.TLS.CipherSuite))
		}
		c.CloseIdleConnections()
	}
	c := tlsClient(p, &tls.Config{ServerName: "a.example", MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11})
	if _, _, err := getTLS(t, c, addr); err == nil {
		t.Error("TLS 1.1 accepted")
	}
	// Keep-alive: several requests on one connection.
	c = tlsClient(p, &tls.Config{ServerName: "a.example"})
	defer c.CloseIdleConnections()
	var conns atomic.Int32
	c.Transport.(*http.Transport).DialContext = countingDialer(&conns)
	for range 5 {
		if _, _, err := getTLS(t, c, addr); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("5 keep-alive requests took %d connections", n)
	}
}

// TestTLSSNI: the certificate follows the SNI: exact, wildcard, default.
func TestTLSSNI(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a, p.b, p.wild)})
	for _, tc := range []struct {
		sni  string
		want *testcert.Pair
	}{{"a.example", p.a}, {"b.example", p.b}, {"x.w.example", p.wild}, {"", p.a}, {"other.example", p.a}} {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: testTimeout}, "tcp", addr, &tls.Config{ServerName: tc.sni, InsecureSkipVerify: tc.sni == "" || tc.sni == "other.example", RootCAs: p.ca.Pool})
		if err != nil {
			t.Errorf("%q: %v", tc.sni, err)
			continue
		}
		got := conn.ConnectionState().PeerCertificates[0]
		if got.SerialNumber.Cmp(tc.want.Leaf.SerialNumber) != 0 {
			t.Errorf("SNI %q got the certificate for %v", tc.sni, got.DNSNames)
		}
		conn.Close()
	}
}

// TestTLSClientAuth: require refuses clients without a certificate or with
// one from another CA at the handshake; verify_if_given accepts the first
// and refuses the second.
func TestTLSClientAuth(t *testing.T) {
	p := newPKI(t)
	for _, mode := range []edgetls.ClientAuthMode{edgetls.ClientAuthRequire, edgetls.ClientAuthVerifyIfGiven} {
		_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a), ClientCA: p.ca.File, ClientAuth: mode})
		for _, tc := range []struct {
			name string
			cert *testcert.Pair
			ok   bool
		}{
			{"valid", p.client, true},
			{"none", nil, mode == edgetls.ClientAuthVerifyIfGiven},
			{"other CA", p.stranger, false},
		} {
			cfg := &tls.Config{ServerName: "a.example"}
			if cert := tc.cert; cert != nil {
				// Sent whatever CAs the server names (a Go client would
				// otherwise keep a certificate from another CA to itself).
				cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert.TLS, nil }
			}
			c := tlsClient(p, cfg)
			_, body, err := getTLS(t, c, addr)
			c.CloseIdleConnections()
			if tc.ok && (err != nil || !strings.HasPrefix(body, "tls=true")) {
				t.Errorf("%s, %s: %v %q", mode, tc.name, err, body)
			}
			if !tc.ok && err == nil {
				t.Errorf("%s, %s: accepted", mode, tc.name)
			}
			if !tc.ok && err != nil && !strings.Contains(err.Error(), "certificate") && !strings.Contains(err.Error(), "tls") {
				t.Errorf("%s, %s: refused, but not at the handshake: %v", mode, tc.name, err)
			}
		}
	}
}

// TestTLSPlainHTTP: plain HTTP to the TLS port gets a 400 in plain text.
func TestTLSPlainHTTP(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a)})
	c := dial(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n")
	resp, body := readResponse(t, bufio.NewReader(c), "GET")
	if resp.StatusCode != 400 || !strings.Contains(body, "plain HTTP request was sent to HTTPS port") || resp.ContentLength != int64(len(body)) {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

// TestTLSBadHandshakes: garbage, a truncated ClientHello followed by
// silence, and a truncated one followed by a close each end the
// connection without an answer and without a goroutine left behind
// (startTLS checks goroutines at cleanup).
func TestTLSBadHandshakes(t *testing.T) {
	p := newPKI(t)
	const hs = 300 * time.Millisecond
	_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a), HandshakeTimeout: hs})
	hello := clientHello(t)
	for _, tc := range []struct {
		name  string
		bytes []byte
		close bool
	}{
		{"garbage", []byte("\x00\x01\x02\x03garbage\xff"), false},
		{"lowercase", []byte("get / HTTP/1.1\r\n\r\n"), false},
		{"truncated, silent", hello[:len(hello)/2], false},
		{"truncated, closed", hello[:7], true},
		{"record header only", hello[:5], false},
		{"bad record", []byte{0x16, 0x03, 0x01, 0xff, 0xff, 0x01, 0, 0, 0}, false},
	} {
		c := dial(t, addr)
		c.Write(tc.bytes)
		if tc.close {
			c.(*net.TCPConn).CloseWrite()
		}
		start := time.Now()
		br := bufio.NewReader(c)
		b, err := io.ReadAll(br)
		if err != nil && !strings.Contains(err.Error(), "reset") {
			t.Errorf("%s: %v after %v", tc.name, err, time.Since(start))
		}
		// crypto/tls may send an alert record (content type 21); never
		// an HTTP answer.
		if len(b) > 0 && b[0] != 0x15 {
			t.Errorf("%s: answered %q", tc.name, b)
		}
	}
	// The server still serves.
	c := tlsClient(p, &tls.Config{ServerName: "a.example"})
	defer c.CloseIdleConnections()
	if _, _, err := getTLS(t, c, addr); err != nil {
		t.Fatal(err)
	}
}

// clientHello records the first flight of a Go TLS client.
func clientHello(t *testing.T) []byte {
	t.Helper()
	l := testnet.Listen(t)
	defer l.Close()
	go func() {
		c, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{ServerName: "a.example"})
		if err == nil {
			c.Close()
		}
	}()
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetReadDeadline(time.Now().Add(testTimeout))
	buf := make([]byte, 4096)
	n, err := s.Read(buf)
	if err != nil || n < 10 || buf[0] != 0x16 {
		t.Fatalf("client hello: %d bytes, %v", n, err)
	}
	return buf[:n]
}

// TestTLSReloadUnderLoad: clients making requests on new and kept
// connections see no failure while the certificate is swapped back and
// forth; after the last reload new connections get the new certificate.
func TestTLSReloadUnderLoad(t *testing.T) {
	p := newPKI(t)
	// Both leaves name a.example, so either verifies for the client.
	var z time.Time
	a1 := p.ca.Leaf(t, "a1", []string{"a.example"}, z, z)
	a2 := p.ca.Leaf(t, "a2", []string{"a.example"}, z, z)
	st, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(a1)})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ok, failed atomic.Int32
	var firstErr atomic.Value
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := tlsClient(p, &tls.Config{ServerName: "a.example"})
			c.Transport.(*http.Transport).DisableKeepAlives = i%2 == 0
			defer c.CloseIdleConnections()
			for n := 0; n < 2000; n++ { // bounded; stop ends it sooner
				select {
				case <-stop:
					return
				default:
				}
				if _, body, err := getTLS(t, c, addr); err != nil || !strings.HasPrefix(body, "tls=true") {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprint(err, body))
					continue
				}
				ok.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(testTimeout)
	for i := 0; i < 20 && time.Now().Before(deadline); i++ {
		next := a2
		if i%2 == 1 {
			next = a1
		}
		if err := st.Reload(edgetls.Options{Certificates: certFiles(next)}); err != nil {
			t.Fatal(err)
		}
		// Let requests through between swaps (bounded).
		for want := ok.Load() + 5; ok.Load() < want && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	if failed.Load() != 0 || ok.Load() == 0 {
		t.Errorf("%d requests failed (first: %v), %d succeeded", failed.Load(), firstErr.Load(), ok.Load())
	}
	// The last reload installed a1.
	conn, err := tls.Dial("tcp", addr, &tls.Config{ServerName: "a.example", RootCAs: p.ca.Pool})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if conn.ConnectionState().PeerCertificates[0].SerialNumber.Cmp(a1.Leaf.SerialNumber) != 0 {
		t.Error("new connection did not get the reloaded certificate")
	}
}

// TestTLSResumption: a second connection resumes the session with a ticket.
func TestTLSResumption(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a)})
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cfg := &tls.Config{ServerName: "a.example", RootCAs: p.ca.Pool, MaxVersion: v, ClientSessionCache: tls.NewLRUClientSessionCache(4)}
		var resumed bool
		for range 2 {
			conn, err := tls.Dial("tcp", addr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// TLS 1.3 tickets arrive after the handshake: one exchange.
			conn.SetDeadline(time.Now().Add(testTimeout))
			io.WriteString(conn, "GET / HTTP/1.1\r\nHost: a.example\r\n\r\n")
			readResponse(t, bufio.NewReader(conn), "GET")
			resumed = conn.ConnectionState().DidResume
			conn.Close()
		}
		if !resumed {
			t.Errorf("%s: second connection did not resume", tls.VersionName(v))
		}
	}
}

// TestTLSCurl: curl over https, TLS 1.2 and 1.3.
func TestTLSCurl(t *testing.T) {
	curl := testenv.Command(t, "curl")
	p := newPKI(t)
	_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a)})
	_, port, _ := net.SplitHostPort(addr)
	for _, v := range [][]string{{"--tlsv1.2", "--tls-max", "1.2"}, {"--tlsv1.3", "--tls-max", "1.3"}} {
		args := append([]string{"-sS", "--cacert", p.ca.File, "--resolve", "a.example:" + port + ":127.0.0.1", "-w", " %{http_code}"}, v...)
		out, err := runCmd(curl, append(args, "https://a.example:"+port+"/")...)
		if err != nil || out != "tls=true sni=a.example ok=true 200" {
			t.Errorf("curl %v: %v %q", v, err, out)
		}
	}
}

// TestTLSOpenSSL: openssl s_client sees TLS 1.3 and 1.2 with AEAD suites,
// and is refused TLS 1.1 and CBC suites.
func TestTLSOpenSSL(t *testing.T) {
	openssl := testenv.Command(t, "openssl")
	p := newPKI(t)
	_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a)})
	sclient := func(args ...string) (string, error) {
		return runCmd("sh", append([]string{"-c", `o=$0 a=$1 ca=$2; shift 2; printf 'Q\n' | "$o" s_client -connect "$a" -servername a.example -CAfile "$ca" "$@" 2>&1`,
			openssl, addr, p.ca.File}, args...)...)
	}
	out, err := sclient("-tls1_3")
	if err != nil || !strings.Contains(out, "TLSv1.3") || !strings.Contains(out, "Verify return code: 0") {
		t.Errorf("tls1.3: %v\n%s", err, out)
	}
	out, err = sclient("-tls1_2")
	if err != nil || !strings.Contains(out, "Protocol  : TLSv1.2") || !strings.Contains(out, "ECDHE-ECDSA-AES128-GCM-SHA256") {
		t.Errorf("tls1.2: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"-tls1_1"}, {"-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA"}, {"-tls1_2", "-cipher", "AES128-GCM-SHA256"}} {
		if out, err := sclient(args...); err == nil && !strings.Contains(out, "alert") {
			t.Errorf("%v accepted:\n%s", args, out)
		}
	}
}

// TestRedirectHTTPS: a redirect listener answers 308 to https on the TLS
// port, same host and target; a host it cannot put in Location gets 400.
func TestRedirectHTTPS(t *testing.T) {
	testenv.CheckGoroutines(t)
	s := New(Options{Handler: okHandler("not redirected")})
	l := testnet.Listen(t)
	done := make(chan error, 1)
	go func() { done <- s.ServeStream(RedirectHTTPS(l, "8443")) }()
	defer func() {
		s.Close()
		<-done
	}()
	c := dial(t, l.Addr().String())
	br := bufio.NewReader(c)
	for _, tc := range []struct{ host, target, status, loc string }{
		{"h.example:8080", "/p/q?x=1", "308", "https://h.example:8443/p/q?x=1"},
		{"[::1]:80", "/", "308", "https://[::1]:8443/"},
		{"h.example", "/", "308", "https://h.example:8443/"},
		{"bad\\host", "/", "400", ""},
	} {
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", tc.target, tc.host)
		resp, _ := readResponse(t, br, "GET")
		if fmt.Sprint(resp.StatusCode) != tc.status || resp.Header.Get("Location") != tc.loc {
			t.Errorf("%s %s: %d %q", tc.host, tc.target, resp.StatusCode, resp.Header.Get("Location"))
		}
		if resp.Close {
			break
		}
	}
	if got := hostWithoutPort([]byte("h.example:443")); string(got) != "h.example" {
		t.Errorf("hostWithoutPort: %q", got)
	}
}
