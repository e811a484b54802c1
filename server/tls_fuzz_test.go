package server

import (
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/server/edgetls"
)

// scriptConn is a net.Conn that reads a fixed script, then EOF, and
// records what is written: a TLS connection's first bytes without a
// network.
type scriptConn struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (c *scriptConn) Read(b []byte) (int, error)       { return c.in.Read(b) }
func (c *scriptConn) Write(b []byte) (int, error)      { return c.out.Write(b) }
func (c *scriptConn) Close() error                     { return nil }
func (c *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *scriptConn) SetDeadline(time.Time) error      { return nil }
func (c *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (c *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// FuzzTLSSniff: whatever a client sends first, the handshake ends with an
// error (the script ends before any handshake can finish) and never a
// panic; plain HTTP gets exactly the 400, garbage gets nothing, and only
// bytes that start with a handshake record reach crypto/tls.
func FuzzTLSSniff(f *testing.F) {
	ca := testcert.NewCA(f, "fuzz CA")
	var z time.Time
	leaf := ca.Leaf(f, "a", []string{"a.example"}, z, z)
	st, err := edgetls.New(edgetls.Options{Certificates: []edgetls.CertFiles{{Cert: leaf.CertFile, Key: leaf.KeyFile}}})
	if err != nil {
		f.Fatal(err)
	}
	o := &TLSOptions{Config: st.TLSConfig(), HandshakeTimeout: time.Second}
	for _, seed := range []string{"", "GET / HTTP/1.1\r\n\r\n", "\x16", "\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00", "\x00garbage", "\x15\x03\x03\x00\x02\x02\x28", "PRI * HTTP/2.0\r\n"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &scriptConn{in: bytes.NewReader(b)}
		ts := &tlsStream{raw: c, o: o}
		var p [16]byte
		_, err := ts.Read(p[:])
		if err == nil {
			t.Fatal("handshake finished on a script without a client")
		}
		switch sniff(b) {
		case sniffHTTP:
			if err != ErrPlainHTTPOnTLS || c.out.String() != plainHTTPAnswer {
				t.Fatalf("plain HTTP: %v, wrote %q", err, c.out.String())
			}
		case sniffOther:
			if len(b) > 0 && err != ErrNotTLS || c.out.Len() != 0 {
				t.Fatalf("garbage: %v, wrote %q", err, c.out.String())
			}
		case sniffTLS:
			if err == ErrNotTLS || err == ErrPlainHTTPOnTLS || strings.HasPrefix(c.out.String(), "HTTP/") {
				t.Fatalf("TLS record: %v, wrote %q", err, c.out.String())
			}
		}
		if len(b) == 0 && err != io.EOF {
			t.Fatalf("empty: %v", err)
		}
		ts.Close()
	})
}

// TestPlainHTTPAnswerLength: the canned 400's Content-Length matches its
// body.
func TestPlainHTTPAnswerLength(t *testing.T) {
	i := strings.Index(plainHTTPAnswer, "\r\n\r\n")
	body := plainHTTPAnswer[i+4:]
	if !strings.Contains(plainHTTPAnswer, "Content-Length: "+strconv.Itoa(len(body))+"\r\n") {
		t.Errorf("body of %d bytes: %q", len(body), plainHTTPAnswer)
	}
}
