package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// listenerSpec is one listener of a custom configuration: plain HTTP/1.1
// with h2c beside it, or TLS (which offers h2 by ALPN).
type listenerSpec struct {
	addr string
	tls  *certFiles
}

// customYAML is a configuration for the HTTP/2 and normalisation
// scenarios: their listeners, the variant's engine and proxy path, the
// suite's limits and timeouts, an upstream named backend at backend (none
// if empty), and routes, the lines of the routes list. It writes only keys
// the starting commit of issue 27 knows, so that one scenario runs on the
// binaries before and after it.
func customYAML(o *options, v variant, ls []listenerSpec, backend, routes string) string {
	var b strings.Builder
	b.WriteString("listeners:\n")
	for _, l := range ls {
		fmt.Fprintf(&b, "  - address: %q\n", l.addr)
		if l.tls == nil {
			b.WriteString("    h2c: true\n")
		} else {
			fmt.Fprintf(&b, "    tls:\n      certificates:\n        - {cert: %q, key: %q}\n", l.tls.cert, l.tls.key)
		}
	}
	writeServerKeys(&b, o, v)
	if backend != "" {
		fmt.Fprintf(&b, "upstreams:\n  - name: backend\n    targets: [%q]\n", backend)
	}
	b.WriteString("routes:\n")
	b.WriteString(routes)
	return b.String()
}

// freeAddrs returns n loopback addresses with free ports (see freePort).
func freeAddrs(n int) ([]string, error) {
	addrs := make([]string, n)
	for i := range addrs {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		addrs[i] = net.JoinHostPort(loopback, port)
	}
	return addrs, nil
}

// certFiles are a self-signed certificate and its key, as PEM files.
type certFiles struct{ cert, key string }

var (
	certOnce sync.Once
	certOut  certFiles
	certErr  error
)

// suiteCert writes one self-signed ECDSA certificate into the suite's
// directory, the first time a scenario asks, for every TLS listener: the
// clients do not verify it (they attack the server, not its identity).
func suiteCert(o *options) (certFiles, error) {
	certOnce.Do(func() { certOut, certErr = writeSelfSigned(o.dir) })
	return certOut, certErr
}

func writeSelfSigned(dir string) (certFiles, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certFiles{}, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(now.UnixNano()),
		Subject:      pkix.Name{CommonName: "attack.test"},
		// Backdated an hour, for a clock a little behind; a day is any run.
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"attack.test", "public.example", "admin.example"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return certFiles{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return certFiles{}, err
	}
	f := certFiles{cert: filepath.Join(dir, "attack-cert.pem"), key: filepath.Join(dir, "attack-key.pem")}
	if err := os.WriteFile(f.cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return certFiles{}, err
	}
	if err := os.WriteFile(f.key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return certFiles{}, err
	}
	return f, nil
}
