package main

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
)

func tlsConfigFile(t *testing.T, file, backend string, cert *testcert.Pair) {
	t.Helper()
	body := fmt.Sprintf(`listeners:
  - address: "127.0.0.1:0"
    tls:
      certificates: [{cert: %q, key: %q}]
  - address: "127.0.0.1:0"
    redirect_to_https: true
  - address: "127.0.0.1:0"
upstreams:
  - name: back
    targets: [%q]
routes:
  - match: {path: /xfp}
    proxy: {upstream: back}
  - match: {path_prefix: /}
    respond: {status: 200, body: hi}
`, cert.CertFile, cert.KeyFile, backend)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// certServe is the set-up of the serve tests that reload a certificate
// (TLS over TCP, HTTP/3): a backend that answers each request with
// answer(r), a CA, two leaves for a.example (a1 served first, a2 after
// the reload) and the path of the configuration file.
type certServe struct {
	backend string // host:port
	ca      *testcert.CA
	a1, a2  *testcert.Pair
	file    string
}

func newCertServe(t *testing.T, caName string, answer func(*http.Request) string) *certServe {
	t.Helper()
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, answer(r))
	}))
	t.Cleanup(back.Close)
	ca := testcert.NewCA(t, caName)
	var z time.Time
	return &certServe{backend: strings.TrimPrefix(back.URL, "http://"), ca: ca,
		a1:   ca.Leaf(t, "a1", []string{"a.example"}, z, z),
		a2:   ca.Leaf(t, "a2", []string{"a.example"}, z, z),
		file: filepath.Join(t.TempDir(), "c.yaml")}
}

// reload checks that the server (this process) serves a1, then has it
// load a2: write writes the configuration with a2, SIGHUP, and serial (a
// new connection's certificate) is polled until it is a2's. proto names
// the protocol in the failures ("" or "HTTP/3 ").
func (s *certServe) reload(t *testing.T, serial func() string, proto string, write func()) {
	t.Helper()
	if serial() != s.a1.Leaf.SerialNumber.String() {
		t.Fatal(proto + "not serving the configured certificate")
	}
	write()
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	deadline := time.Now().Add(5 * time.Second)
	for serial() != s.a2.Leaf.SerialNumber.String() {
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP did not reload the " + proto + "certificate")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServeTLS: a configured TLS listener serves https, proxied requests
// carry X-Forwarded-Proto: https (http on the plain listener), the
// redirect listener answers 308 to the TLS listener's port, and SIGHUP
// reloads the certificate for new connections.
func TestServeTLS(t *testing.T) {
	s := newCertServe(t, "serve CA", func(r *http.Request) string { return r.Header.Get("X-Forwarded-Proto") })
	ca, file := s.ca, s.file
	tlsConfigFile(t, file, s.backend, s.a1)
	addrs := startServeAll(t, "-config", file)
	if len(addrs) != 3 {
		t.Fatalf("addresses %v", addrs)
	}
	tlsAddr, redirAddr, plainAddr := addrs[0], addrs[1], addrs[2]
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "a.example"}}
	c := &http.Client{Timeout: 10 * time.Second, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer c.CloseIdleConnections()
	if code, body := fetch(t, c, "GET", "https://"+tlsAddr+"/xfp", ""); code != 200 || body != "https" {
		t.Errorf("https proxy: %d %q", code, body)
	}
	if code, body := fetch(t, c, "GET", "http://"+plainAddr+"/xfp", ""); code != 200 || body != "http" {
		t.Errorf("http proxy: %d %q", code, body)
	}
	resp, err := c.Get("http://" + redirAddr + "/p?q=1")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, port, _ := net.SplitHostPort(tlsAddr)
	if resp.StatusCode != 308 || resp.Header.Get("Location") != "https://127.0.0.1:"+port+"/p?q=1" {
		t.Errorf("redirect: %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}

	serial := func() string {
		conn, err := tls.Dial("tcp", tlsAddr, &tls.Config{RootCAs: ca.Pool, ServerName: "a.example"})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.String()
	}
	s.reload(t, serial, "", func() { tlsConfigFile(t, file, s.backend, s.a2) })
	// A broken certificate file keeps the running one.
	os.WriteFile(s.a2.CertFile, []byte("broken"), 0o600)
	syscall.Kill(os.Getpid(), syscall.SIGHUP)
	time.Sleep(200 * time.Millisecond)
	if serial() != s.a2.Leaf.SerialNumber.String() {
		t.Error("a broken file replaced the certificate")
	}
}

// TestCheckTLS: `simdedge check` refuses an expired certificate and a key
// that does not match, and warns on one that expires within 14 days.
func TestCheckTLS(t *testing.T) {
	ca := testcert.NewCA(t, "check CA")
	now := time.Now()
	good := ca.Leaf(t, "good", []string{"a.example"}, time.Time{}, time.Time{})
	expired := ca.Leaf(t, "expired", []string{"a.example"}, now.Add(-48*time.Hour), now.Add(-time.Hour))
	soon := ca.Leaf(t, "soon", []string{"a.example"}, now.Add(-time.Hour), now.Add(5*24*time.Hour))
	file := filepath.Join(t.TempDir(), "c.yaml")
	for _, tc := range []struct {
		name      string
		cert, key string
		code      int
		stderr    string
	}{
		{"good", good.CertFile, good.KeyFile, 0, ""},
		{"expired", expired.CertFile, expired.KeyFile, 1, "certificate expired"},
		{"mismatch", good.CertFile, soon.KeyFile, 1, "private key does not match"},
		{"soon", soon.CertFile, soon.KeyFile, 0, "in less than 14 days"},
	} {
		os.WriteFile(file, []byte(fmt.Sprintf("listeners:\n  - address: \"127.0.0.1:0\"\n    tls: {certificates: [{cert: %q, key: %q}]}\nroutes: [{echo: {}}]\n", tc.cert, tc.key)), 0o644)
		var stdout, stderr bytes.Buffer
		code := runCheck([]string{"-config", file}, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) || tc.stderr == "" && strings.Contains(stderr.String(), "warning") {
			t.Errorf("%s: %d %q", tc.name, code, stderr.String())
		}
		if code == 0 && !strings.Contains(stdout.String(), "min_version: \"1.2\"") {
			t.Errorf("%s: effective config without the TLS defaults:\n%s", tc.name, stdout.String())
		}
	}
}

// TestCheckUpstreamTLS: `simdedge check` loads an upstream's CA and client
// pair, and warns when verification is skipped.
func TestCheckUpstreamTLS(t *testing.T) {
	ca := testcert.NewCA(t, "backend CA")
	a, b := ca.Client(t, "a", "a.internal"), ca.Client(t, "b", "b.internal")
	junk := filepath.Join(t.TempDir(), "junk.pem")
	os.WriteFile(junk, []byte("junk"), 0o644)
	file := filepath.Join(t.TempDir(), "c.yaml")
	for _, tc := range []struct {
		name, tls string
		code      int
		stderr    string
	}{
		{"good", fmt.Sprintf("{ca: %q, client_cert: {cert: %q, key: %q}}", ca.File, a.CertFile, a.KeyFile), 0, ""},
		{"ca not PEM", fmt.Sprintf("{ca: %q}", junk), 1, "upstreams[0].tls: edgetls: upstream tls ca holds no PEM certificate"},
		{"pair mismatch", fmt.Sprintf("{client_cert: {cert: %q, key: %q}}", a.CertFile, b.KeyFile), 1, "private key does not match"},
		{"insecure", "{insecure_skip_verify: true}", 0, "warning: upstream s: tls.insecure_skip_verify is set"},
	} {
		os.WriteFile(file, []byte("upstreams:\n  - name: s\n    targets: [\"https://127.0.0.1:9443\"]\n    tls: "+tc.tls+"\nroutes: [{proxy: {upstream: s}}]\n"), 0o644)
		var stdout, stderr bytes.Buffer
		code := runCheck([]string{"-config", file}, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.stderr) || tc.stderr == "" && strings.Contains(stderr.String(), "warning") {
			t.Errorf("%s: %d %q", tc.name, code, stderr.String())
		}
	}
}
