package acmetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/letsencrypt/pebble/v2/ca"
	"github.com/letsencrypt/pebble/v2/db"
	"github.com/letsencrypt/pebble/v2/va"
	"github.com/letsencrypt/pebble/v2/wfe"
	"github.com/miekg/dns"
)

// pebble is an ACME server on loopback, in-process.
type pebble struct {
	// directory is the ACME directory URL.
	directory string
	// tlsCA is the PEM file of the root that signs the directory's own
	// HTTPS certificate (simdedge's tls.acme.ca).
	tlsCA string
	// roots verify the certificates pebble issues.
	roots *x509.CertPool
}

// pebbleCertValidity is the lifetime of the directory's own HTTPS
// certificate: the test's span with room to spare.
const pebbleCertValidity = time.Hour

// startPebble starts pebble's web front end, CA and validation authority;
// the VA validates HTTP-01 on httpPort and TLS-ALPN-01 on tlsPort of
// whatever the test's DNS server (dnsAddr) resolves the domain to.
func startPebble(t *testing.T, dir string, httpPort, tlsPort int, dnsAddr string) *pebble {
	t.Helper()
	// No random sleep before validations (up to 5 s each otherwise), real
	// validations, and no deliberately rejected nonces (they only cost
	// retries here).
	t.Setenv("PEBBLE_VA_NOSLEEP", "1")
	t.Setenv("PEBBLE_VA_ALWAYS_VALID", "0")
	t.Setenv("PEBBLE_WFE_NONCEREJECT", "0")
	logger := log.New(newTestWriter(t), "pebble ", 0)
	store := db.NewMemoryStore()
	authority := ca.New(logger, store, "", "ecdsa", 0, 1, map[string]ca.Profile{
		"default": {Description: "default"},
	})
	vauth := va.New(logger, httpPort, tlsPort, false, dnsAddr, store)
	front := wfe.New(logger, store, vauth, authority, []string{"pebble.letsencrypt.org"}, false, false, 0, 0)

	caPEM, cert := selfSignedTLS(t)
	caFile := filepath.Join(dir, "pebble-tls-ca.pem")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: front.Handler(), ErrorLog: logger,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })

	roots := x509.NewCertPool()
	roots.AddCert(authority.GetRootCert(0).Cert)
	return &pebble{directory: "https://" + ln.Addr().String() + wfe.DirectoryPath, tlsCA: caFile, roots: roots}
}

// selfSignedTLS makes a certificate for 127.0.0.1 that is its own root.
func selfSignedTLS(t *testing.T) ([]byte, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "pebble test directory"},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(pebbleCertValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// startDNS answers every A question with 127.0.0.1 and every other
// question with no record, over TCP (pebble's VA asks over TCP), so that
// the VA reaches simdedge's challenge ports for any test domain.
func startDNS(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &dns.Server{Listener: ln, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, q *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(q)
		for _, qq := range q.Question {
			if qq.Qtype == dns.TypeA {
				m.Answer = append(m.Answer, &dns.A{
					Hdr: dns.RR_Header{Name: qq.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1},
					A:   net.IPv4(127, 0, 0, 1),
				})
			}
		}
		w.WriteMsg(m)
	})}
	go srv.ActivateAndServe()
	t.Cleanup(func() { srv.Shutdown() })
	return ln.Addr().String()
}

// testWriter sends pebble's log to the test's log (shown on failure or
// with -v) until the test ends; pebble's goroutines that outlive it
// (the VA's task loop) write to nothing.
type testWriter struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func newTestWriter(t *testing.T) *testWriter {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return w
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

var _ io.Writer = (*testWriter)(nil)
