package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	simdconfig "github.com/simdedge/simdedge/server/config"
)

// TestGenTLSFiles: the leaf is ECDSA P-256, valid now for 127.0.0.1 and
// localhost, chains to the CA written beside it, and the key file pairs
// with it (as the servers load them).
func TestGenTLSFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	f, err := genTLSFiles(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		t.Fatalf("cert and key do not pair: %v", err)
	}
	if len(pair.Certificate) != 2 {
		t.Fatalf("chain has %d certificates, want leaf and CA", len(pair.Certificate))
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pub, ok := leaf.PublicKey.(*ecdsa.PublicKey)
	if !ok || pub.Curve != elliptic.P256() {
		t.Fatalf("leaf key is %T, want ECDSA P-256", leaf.PublicKey)
	}
	caPEM, err := os.ReadFile(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.pem holds no certificate")
	}
	for _, name := range []string{"127.0.0.1", "localhost"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name, CurrentTime: now}); err != nil {
			t.Errorf("leaf does not verify for %s: %v", name, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "example.com", CurrentTime: now}); err == nil {
		t.Error("leaf verifies for example.com")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost", CurrentTime: now.Add(2 * certLifetime)}); err == nil {
		t.Error("leaf still valid after its lifetime")
	}
	if st, err := os.Stat(f.Key); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v (%v), want 0600", st.Mode().Perm(), err)
	}
	// A second run has different keys.
	g, err := genTLSFiles(t.TempDir(), now)
	if err != nil {
		t.Fatal(err)
	}
	k1, _ := os.ReadFile(f.Key)
	k2, _ := os.ReadFile(g.Key)
	if string(k1) == string(k2) {
		t.Error("two runs generated the same key")
	}
	if b, _ := pem.Decode(k1); b == nil || b.Type != "PRIVATE KEY" {
		t.Errorf("key PEM block = %v, want PRIVATE KEY", b)
	}
}

// TestGenTLSFilesHandshake: a TLS 1.3 server on the generated files
// completes a handshake with a client that trusts only the generated CA.
func TestGenTLSFilesHandshake(t *testing.T) {
	f, err := genTLSFiles(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, _ := os.ReadFile(f.CA)
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		done <- c.(*tls.Conn).Handshake()
	}()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", ln.Addr().String(),
		&tls.Config{RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS13})
	if err != nil {
		t.Fatalf("client handshake: %v", err)
	}
	c.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("server handshake: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server handshake did not finish")
	}
}

// TestNginxConfTLS: the https area's nginx listens with ssl on the run's
// files, TLS 1.3 only, with a shared session cache; the plain config has
// none of it.
func TestNginxConfTLS(t *testing.T) {
	f := &tlsFiles{CA: "/t/ca.pem", Cert: "/t/leaf.pem", Key: "/t/leaf.key"}
	s, err := nginxConfigTLS("/tmp/x", []int{1234}, nil, f)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"listen 127.0.0.1:1234 ssl;", "ssl_certificate /t/leaf.pem;", "ssl_certificate_key /t/leaf.key;",
		"ssl_protocols TLSv1.3;", "ssl_session_cache shared:SSL:10m;", "worker_processes 1;", `return 200 "hello, world\n";`} {
		if !strings.Contains(s, want) {
			t.Errorf("TLS config lacks %q:\n%s", want, s)
		}
	}
	if strings.Count(s, "{") != strings.Count(s, "}") {
		t.Errorf("unbalanced braces:\n%s", s)
	}
	plain, err := nginxConfig("/tmp/x", []int{1234}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "ssl") {
		t.Errorf("plain config mentions ssl:\n%s", plain)
	}
}

// TestSimdedgeConfTLS: the https area's simdedge config is a TLS 1.3
// listener on the run's files that simdedge's own parser reads back, on
// the engine asked for.
func TestSimdedgeConfTLS(t *testing.T) {
	f := &tlsFiles{CA: "/t/ca.pem", Cert: "/t/leaf.pem", Key: "/t/leaf.key"}
	for _, engine := range []string{"loop", "goroutine"} {
		s, err := simdedgeConfigTLS(8443, nil, engine, nil, f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := simdconfig.Parse([]byte(s))
		if err != nil {
			t.Fatalf("%s: simdedge's parser rejects the generated config: %v\n%s", engine, err, s)
		}
		if c.Engine != engine {
			t.Errorf("engine = %q, want %q", c.Engine, engine)
		}
		if len(c.Listeners) != 1 || c.Listen != "" {
			t.Fatalf("want one listener and no listen:\n%s", s)
		}
		l := c.Listeners[0]
		if l.Address != "127.0.0.1:8443" || l.TLS == nil {
			t.Fatalf("listener %+v, want a TLS listener on 127.0.0.1:8443", l)
		}
		if len(l.TLS.Certificates) != 1 || l.TLS.Certificates[0].Cert != f.Cert || l.TLS.Certificates[0].Key != f.Key {
			t.Errorf("certificates = %+v", l.TLS.Certificates)
		}
		if l.TLS.MinVersion != "1.3" {
			t.Errorf("min_version = %q, want 1.3", l.TLS.MinVersion)
		}
		if !strings.Contains(s, `body: "hello, world\n"`) {
			t.Errorf("config does not answer the origin's body:\n%s", s)
		}
	}
	plain, err := simdedgeConfig(1, nil, "loop", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "tls") || !strings.Contains(plain, `listen: "127.0.0.1:1"`) {
		t.Errorf("plain config changed:\n%s", plain)
	}
}

// TestHTTPSRows: the loop-tls-off row exists only when asked for, sets
// the environment variable, and every row and pair has a benchmark name
// and names rows that exist.
func TestHTTPSRows(t *testing.T) {
	for _, withOff := range []bool{false, true} {
		ss := httpsScenarios(withOff)
		if len(ss) != 2 || !ss[0].https || ss[0].handshake || !ss[1].https || !ss[1].handshake {
			t.Fatalf("want a keep-alive and a handshake scenario, got %+v", ss)
		}
		var names []string
		for _, sp := range ss[0].servers {
			names = append(names, sp.name)
			if ss[0].bench[sp.name] == "" {
				t.Errorf("row %s has no benchmark name", sp.name)
			}
		}
		if slices.Contains(names, httpsLoopOff) != withOff {
			t.Errorf("withOff %v: rows %v", withOff, names)
		}
		for _, p := range ss[0].pairs {
			if !slices.Contains(names, p.Num) || !slices.Contains(names, p.Den) {
				t.Errorf("pair %v names a missing row (rows %v)", p, names)
			}
		}
	}
	for _, r := range httpsRows(true) {
		if (r.name == httpsLoopOff) != slices.Contains(r.env, loopTLSOff) {
			t.Errorf("row %s env %v", r.name, r.env)
		}
	}
}

func TestParseHandshakes(t *testing.T) {
	out := "handshakes 3000\nerrors 2\nseconds 3.000000\np50-ns 1500000\np99-ns 9000000\n"
	w, err := parseHandshakes([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if w.Requests != 3000 || w.SocketErrors != 2 || w.Duration != 3*time.Second || w.RPS != 1000 {
		t.Errorf("got requests %d errors %d duration %v rps %v", w.Requests, w.SocketErrors, w.Duration, w.RPS)
	}
	if w.Latency[50] != 1500*time.Microsecond || w.Latency[99] != 9*time.Millisecond {
		t.Errorf("latency = %v", w.Latency)
	}
	for _, bad := range []string{"", "errors 1\n", "handshakes x\n", "handshakes 1\nseconds -1\n", "handshakes 1\np50-ns -5\n"} {
		if _, err := parseHandshakes([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := parseHandshakes([]byte("seconds 1\n")); !errors.Is(err, errNoHandshake) {
		t.Errorf("no handshakes line: err = %v", err)
	}
}

// TestStartProcEnv: a row's environment reaches the server process, on
// top of benchrun's own.
func TestStartProcEnv(t *testing.T) {
	envBin := "/usr/bin/env"
	if !fileExists(envBin) {
		t.Skip("no /usr/bin/env")
	}
	p, err := startProcEnv("env", []string{envBin}, t.TempDir(), []string{loopTLSOff})
	if err != nil {
		t.Fatal(err)
	}
	defer p.stop()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("env did not exit")
	}
	p.out.mu.Lock()
	out := string(p.out.buf)
	p.out.mu.Unlock()
	if !strings.Contains(out, loopTLSOff+"\n") || !strings.Contains(out, "PATH=") {
		t.Errorf("environment lacks %s or benchrun's own:\n%s", loopTLSOff, out)
	}
}
