// Package testcert makes certificates for tests with crypto/x509: a CA, leaf
// certificates for given names (wildcards included), expired ones and client
// certificates, written as PEM files in a test's temporary directory. It is
// internal so that only the project's tests use it; nothing here is fit for
// production keys (short validity, no key protection).
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

// validity is how long a test certificate lives by default: past the
// 14-day expiry warning of `simdedge check`, so that a default certificate
// checks clean.
const validity = 30 * 24 * time.Hour

// CA is a test certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// File is the CA certificate in PEM, in the test's temporary directory.
	File string
	Pool *x509.CertPool
	dir  string
}

// Pair is a certificate and key written as PEM files.
type Pair struct {
	CertFile, KeyFile string
	TLS               tls.Certificate
	Leaf              *x509.Certificate
}

var serial atomic.Int64

// NewCA makes a CA named name (ECDSA P-256) in t.TempDir().
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(validity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &CA{Cert: cert, Key: key, dir: t.TempDir(), Pool: x509.NewCertPool()}
	ca.Pool.AddCert(cert)
	ca.File = filepath.Join(ca.dir, "ca.pem")
	writePEM(t, ca.File, "CERTIFICATE", der)
	return ca
}

// Leaf makes a server certificate for names, valid from notBefore to
// notAfter (zero values: from an hour ago for 30 days).
func (ca *CA) Leaf(t testing.TB, file string, names []string, notBefore, notAfter time.Time) *Pair {
	return ca.issue(t, file, names, notBefore, notAfter, x509.ExtKeyUsageServerAuth)
}

// Client makes a client certificate for name.
func (ca *CA) Client(t testing.TB, file, name string) *Pair {
	return ca.issue(t, file, []string{name}, time.Time{}, time.Time{}, x509.ExtKeyUsageClientAuth)
}

func (ca *CA) issue(t testing.TB, file string, names []string, nb, na time.Time, usage x509.ExtKeyUsage) *Pair {
	t.Helper()
	if nb.IsZero() {
		nb = time.Now().Add(-time.Hour)
	}
	if na.IsZero() {
		na = time.Now().Add(validity)
	}
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: names[0]},
		DNSNames:     names,
		NotBefore:    nb,
		NotAfter:     na,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := &Pair{CertFile: filepath.Join(ca.dir, file+".pem"), KeyFile: filepath.Join(ca.dir, file+".key")}
	writePEM(t, p.CertFile, "CERTIFICATE", der)
	writePEM(t, p.KeyFile, "EC PRIVATE KEY", kder)
	p.Leaf, _ = x509.ParseCertificate(der)
	p.TLS = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: p.Leaf}
	return p
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writePEM(t testing.TB, file, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
