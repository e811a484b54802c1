package server

import (
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server/edgetls"
)

// certRequiredTries: each client is tried this many times, since a lost
// alert depends on how the client's bytes and the server's close
// interleave.
const certRequiredTries = 10

// certRequiredPause is long enough for the server to fail a handshake
// and close on loopback, even on a busy machine (a shorter pause lets the
// test pass without the fix, never fail with it).
const certRequiredPause = 100 * time.Millisecond

// TestTLSCertificateRequired (issue 27): with TLS 1.3 and client_auth
// require, a client without a certificate learns why it was refused: the
// certificate_required alert reaches it instead of a reset. In TLS 1.3 the
// client's handshake ends before the server checks the certificate, so the
// client has sent its request when the server fails; the server must
// close lingering (lingerHandshake) for the alert to survive. A Go client
// (tls.Dial, then a request), curl and openssl s_client, on every engine.
func TestTLSCertificateRequired(t *testing.T) {
	p := newPKI(t)
	_, addr := startTLS(t, tlsHandler(), edgetls.Options{Certificates: certFiles(p.a), ClientCA: p.ca.File, ClientAuth: edgetls.ClientAuthRequire})
	t.Run("go", func(t *testing.T) { certRequiredGo(t, p, addr, "") })
	t.Run("go-proxy-protocol", func(t *testing.T) {
		// On a PROXY listener the handshake runs over the PROXY
		// connection wrapper, which must half-close too.
		leaf, err := tls.LoadX509KeyPair(p.a.CertFile, p.a.KeyFile)
		if err != nil {
			t.Fatal(err)
		}
		ppAddr := startPolicyServer(t, "127.0.0.1/32", ListenerPolicy{ProxyProtocol: true}, &tls.Config{
			Certificates: []tls.Certificate{leaf}, ClientCAs: p.ca.Pool, ClientAuth: tls.RequireAndVerifyClientCert})
		certRequiredGo(t, p, ppAddr, "PROXY TCP4 192.0.2.9 127.0.0.1 4711 443\r\n")
	})
	_, port, _ := net.SplitHostPort(addr)
	t.Run("curl", func(t *testing.T) {
		curl := testenv.Command(t, "curl")
		for i := range certRequiredTries {
			out, err := runCmd(curl, "-sS", "--tlsv1.3", "--cacert", p.ca.File, "--resolve", "a.example:"+port+":127.0.0.1", "https://a.example:"+port+"/")
			if err == nil || !strings.Contains(out, "certificate required") {
				t.Fatalf("try %d: %v %q, want the certificate_required alert", i, err, out)
			}
		}
	})
	t.Run("openssl", func(t *testing.T) {
		openssl := testenv.Command(t, "openssl")
		for i := range certRequiredTries {
			// The request follows the handshake at once, as a client's does.
			out, _ := runCmd("sh", "-c", `printf 'GET / HTTP/1.1\r\nHost: a.example\r\n\r\n' | "$0" s_client -connect "$1" -servername a.example -CAfile "$2" -tls1_3 -ign_eof 2>&1`,
				openssl, addr, p.ca.File)
			if !strings.Contains(out, "certificate required") {
				t.Fatalf("try %d: want the certificate_required alert:\n%s", i, out)
			}
		}
	})
}

// certRequiredGo: a Go client (tls.Dial, then requests) without a
// certificate reads the alert. preface, if not empty, is sent before the
// handshake (a PROXY header).
func certRequiredGo(t *testing.T, p *pki, addr, preface string) {
	for i := range certRequiredTries {
		raw, err := net.DialTimeout("tcp", addr, testTimeout)
		if err != nil {
			t.Fatal(err)
		}
		raw.SetDeadline(time.Now().Add(testTimeout))
		if preface != "" {
			_, err = io.WriteString(raw, preface)
		}
		c := tls.Client(raw, &tls.Config{ServerName: "a.example", RootCAs: p.ca.Pool, MinVersion: tls.VersionTLS13})
		if err == nil {
			err = c.Handshake()
		}
		if err == nil {
			// A request, a pause in which the server fails the
			// handshake and closes, and a second request (a client
			// that pipelines, or reuses the connection a moment
			// later): a reset makes that write fail before the alert
			// is read.
			req := []byte("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n")
			_, err = c.Write(req)
			if err == nil {
				time.Sleep(certRequiredPause)
				_, err = c.Write(req)
			}
			if err == nil {
				var b [512]byte
				_, err = c.Read(b[:])
			}
		}
		raw.Close()
		if err == nil || !strings.Contains(err.Error(), "certificate required") {
			t.Fatalf("try %d: %v, want the certificate_required alert", i, err)
		}
	}
}
