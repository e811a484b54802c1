package acmetest

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testproc"
)

// Bounds. Issuance by pebble on loopback takes about a second; these
// leave room for a busy 2-CPU machine and still end the test in well
// under a minute.
const (
	// issueWait bounds waiting for the certificate to be served.
	issueWait = 30 * time.Second
	// pollEvery spaces the handshakes that look for it.
	pollEvery = 200 * time.Millisecond
	// stopWait bounds simdedge's drain after SIGTERM before it is killed.
	stopWait = 10 * time.Second
	// dialTimeout bounds one handshake.
	dialTimeout = 2 * time.Second
)

// simdedgeBin is the binary built once for the package (TestMain).
var simdedgeBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "simdedge-acmetest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "simdedge")
	// Built in the root module (the parent directory): the binary users
	// run, with none of this module's test-only dependencies.
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/simdedge")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err == nil {
		simdedgeBin = bin
	} else {
		buildErr = fmt.Sprintf("building simdedge: %v\n%s", err, out)
	}
	return m.Run()
}

// buildErr says why simdedgeBin is empty.
var buildErr string

// needBinary skips (or, with REQUIRE_PEBBLE=1 as CI sets, fails) when
// simdedge could not be built.
func needBinary(t *testing.T) {
	t.Helper()
	if simdedgeBin != "" {
		return
	}
	if os.Getenv("REQUIRE_PEBBLE") == "1" {
		t.Fatal(buildErr)
	}
	t.Skip(buildErr)
}

// TestACMEPebble obtains a certificate from pebble through simdedge's
// tls.acme with each challenge type, on each engine: pebble's VA really
// connects to simdedge's TLS listener (TLS-ALPN-01) or its
// redirect_to_https listener (HTTP-01). Then the certificate is served
// over TLS, chains to pebble's root, is in storage, and a restarted
// simdedge serves the same one from storage.
func TestACMEPebble(t *testing.T) {
	needBinary(t)
	for _, tc := range []struct {
		challenge, engine, domain string
	}{
		{"tls-alpn-01", "loop", "alpn-loop.example"},
		{"tls-alpn-01", "goroutine", "alpn-goroutine.example"},
		{"http-01", "loop", "http-loop.example"},
		{"http-01", "goroutine", "http-goroutine.example"},
	} {
		t.Run(tc.challenge+"/"+tc.engine, func(t *testing.T) {
			dir := t.TempDir()
			httpPort, tlsPort := freePort(t), freePort(t)
			peb := startPebble(t, dir, httpPort, tlsPort, startDNS(t))
			storage := filepath.Join(dir, "acme")
			conf := filepath.Join(dir, "simdedge.yaml")
			writeConfig(t, conf, tc.engine, tlsPort, httpPort, peb, tc.domain, storage, tc.challenge)

			tlsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
			stop := startSimdedge(t, conf)
			leaf := waitCert(t, tlsAddr, tc.domain, peb.roots)
			checkHTTPS(t, tlsAddr, tc.domain, peb.roots)
			stored := storedCert(t, storage, tc.domain)
			if !bytes.Equal(stored.Raw, leaf.Raw) {
				t.Fatalf("storage holds another certificate (serial %s) than the one served (%s)", stored.SerialNumber, leaf.SerialNumber)
			}
			stop()

			// A restart loads the certificate from storage instead of
			// asking for a new one.
			stop = startSimdedge(t, conf)
			again := waitCert(t, tlsAddr, tc.domain, peb.roots)
			if !bytes.Equal(again.Raw, leaf.Raw) {
				t.Errorf("after a restart: serial %s, want the stored %s", again.SerialNumber, leaf.SerialNumber)
			}
			stop()
		})
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func writeConfig(t *testing.T, file, engine string, tlsPort, httpPort int, peb *pebble, domain, storage, challenge string) {
	t.Helper()
	y := fmt.Sprintf(`engine: %s
listeners:
  - address: "127.0.0.1:%d"
    tls:
      acme:
        email: ops@example.com
        directory: %q
        domains: [%s]
        storage: %q
        challenges: [%s]
        ca: %q
  - address: "127.0.0.1:%d"
    redirect_to_https: true
routes:
  - match: {path_prefix: /}
    respond: {status: 200, body: "acme ok\n"}
`, engine, tlsPort, peb.directory, domain, storage, challenge, peb.tlsCA, httpPort)
	if err := os.WriteFile(file, []byte(y), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startSimdedge runs the binary with the configuration file conf; the
// returned stop (also a cleanup) ends that process, by its PID, and waits
// for it: a clean drain exits 0 (a race report, under -race, would not).
func startSimdedge(t *testing.T, conf string) (stop func()) {
	t.Helper()
	return testproc.Start(t, simdedgeBin, conf, testproc.Options{Name: "simdedge", StopWait: stopWait}).Stop
}

// waitCert handshakes with the TLS listener for domain until it serves a
// certificate that verifies against pebble's roots, within issueWait.
func waitCert(t *testing.T, addr, domain string, roots *x509.CertPool) *x509.Certificate {
	t.Helper()
	deadline := time.Now().Add(issueWait)
	var last error
	for time.Now().Before(deadline) {
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: dialTimeout}, "tcp", addr,
			&tls.Config{ServerName: domain, RootCAs: roots, NextProtos: []string{"http/1.1"}})
		if err == nil {
			leaf := conn.ConnectionState().PeerCertificates[0]
			conn.Close()
			return leaf
		}
		last = err
		time.Sleep(pollEvery)
	}
	t.Fatalf("no certificate for %s from pebble's CA within %v: last handshake: %v", domain, issueWait, last)
	return nil
}

// checkHTTPS sends a request over the verified TLS connection and expects
// the route's answer: the certificate serves traffic, not only handshakes.
func checkHTTPS(t *testing.T, addr, domain string, roots *x509.CertPool) {
	t.Helper()
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: dialTimeout}, "tcp", addr,
		&tls.Config{ServerName: domain, RootCAs: roots, NextProtos: []string{"http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(issueWait))
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", domain)
	var b bytes.Buffer
	b.ReadFrom(conn)
	if !strings.HasPrefix(b.String(), "HTTP/1.1 200") || !strings.Contains(b.String(), "acme ok") {
		t.Fatalf("https answer: %q", b.String())
	}
}

// storedCert finds domain's certificate in certmagic's storage
// (certificates/<issuer>/<domain>/<domain>.crt).
func storedCert(t *testing.T, storage, domain string) *x509.Certificate {
	t.Helper()
	var found string
	err := filepath.WalkDir(filepath.Join(storage, "certificates"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == domain+".crt" {
			found = p
			return fs.SkipAll
		}
		return err
	})
	if err != nil || found == "" {
		t.Fatalf("no %s.crt under %s: %v", domain, storage, err)
	}
	b, err := os.ReadFile(found)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal(errors.New("stored certificate is not PEM"))
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
