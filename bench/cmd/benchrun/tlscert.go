package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// tlsFiles are the PEM files of the https area, generated once per run in
// the run's temporary directory: every server of the area serves the same
// ECDSA P-256 leaf, signed by the same CA.
type tlsFiles struct {
	CA, Cert, Key string
}

// certLifetime covers any run; the certificate exists only for the run.
const certLifetime = 24 * time.Hour

// certBackdate keeps the certificate valid for a client whose clock is a
// little behind.
const certBackdate = time.Hour

// serialBits is the size of the random serial numbers (RFC 5280 allows up
// to 20 octets; 128 bits never repeat in practice).
const serialBits = 128

// leafNames are what the leaf is valid for: the address the servers
// listen on and the name clients send as SNI.
var (
	leafIP  = net.IPv4(127, 0, 0, 1)
	leafDNS = "localhost"
)

// genTLSFiles writes ca.pem, leaf.pem (the leaf, then the CA: the chain a
// server sends) and leaf.key (PKCS#8) under dir.
func genTLSFiles(dir string, now time.Time) (tlsFiles, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tlsFiles{}, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tlsFiles{}, err
	}
	caSerial, err := serial()
	if err != nil {
		return tlsFiles{}, err
	}
	leafSerial, err := serial()
	if err != nil {
		return tlsFiles{}, err
	}
	notBefore, notAfter := now.Add(-certBackdate), now.Add(certLifetime)
	caTmpl := &x509.Certificate{
		SerialNumber:          caSerial,
		Subject:               pkix.Name{CommonName: "benchrun CA"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return tlsFiles{}, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return tlsFiles{}, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: leafSerial,
		Subject:      pkix.Name{CommonName: leafDNS},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{leafDNS},
		IPAddresses:  []net.IP{leafIP},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		return tlsFiles{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		return tlsFiles{}, err
	}
	f := tlsFiles{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "leaf.pem"), Key: filepath.Join(dir, "leaf.key")}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	chain := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}), caPEM...)
	for _, w := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{
		{f.CA, caPEM, 0o644},
		{f.Cert, chain, 0o644},
		{f.Key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600},
	} {
		if err := os.WriteFile(w.path, w.data, w.mode); err != nil {
			return tlsFiles{}, err
		}
	}
	return f, nil
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), serialBits))
}
