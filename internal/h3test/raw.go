package h3test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
)

// Timeout bounds every dial and request of the raw client.
const Timeout = 20 * time.Second

// RFC 9114 §7.2 frame types and §6.2.1 the control stream's type.
const (
	frameData     = 0x0
	frameHeaders  = 0x1
	frameSettings = 0x4
	streamControl = 0x0
)

// maxFrame bounds a frame the raw client reads: a test response larger
// than this is an error, not an allocation of whatever length the peer
// claims.
const maxFrame = 16 << 20

// errFrameTooLarge: a frame's length is over maxFrame.
var errFrameTooLarge = errors.New("h3test: frame too large")

// TLS is the client configuration for a.example under the CA pool, ALPN h3.
func TLS(pool *x509.CertPool) *tls.Config {
	return &tls.Config{RootCAs: pool, ServerName: "a.example", NextProtos: []string{"h3"}}
}

// Dial opens a QUIC connection to addr and its control stream
// (SETTINGS); the connection closes at cleanup.
func Dial(t testing.TB, addr string, tc *tls.Config, qc *quic.Config) *quic.Conn {
	t.Helper()
	return dial(t, func(ctx context.Context, qc *quic.Config) (*quic.Conn, error) {
		return quic.DialAddr(ctx, addr, tc, qc)
	}, qc)
}

// DialVia is Dial on the transport tr (a socket of the caller's, such as
// one in another network namespace).
func DialVia(t testing.TB, tr *quic.Transport, addr net.Addr, tc *tls.Config, qc *quic.Config) *quic.Conn {
	t.Helper()
	return dial(t, func(ctx context.Context, qc *quic.Config) (*quic.Conn, error) { return tr.Dial(ctx, addr, tc, qc) }, qc)
}

func dial(t testing.TB, d func(context.Context, *quic.Config) (*quic.Conn, error), qc *quic.Config) *quic.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	if qc == nil {
		qc = &quic.Config{}
	}
	c, err := d(ctx, qc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseWithError(0, "") })
	Control(t, c)
	return c
}

// Control opens c's control stream with an empty SETTINGS frame.
func Control(t testing.TB, c *quic.Conn) {
	t.Helper()
	ctrl, err := c.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	b := quicvarint.Append(nil, streamControl)
	b = frameHead(b, frameSettings, 0)
	ctrl.Write(b)
}

func frameHead(b []byte, typ, length uint64) []byte {
	return quicvarint.Append(quicvarint.Append(b, typ), length)
}

// Headers encodes fields (name, value pairs) as a HEADERS frame.
func Headers(fields ...string) []byte {
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		enc.WriteField(qpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append(frameHead(nil, frameHeaders, uint64(buf.Len())), buf.Bytes()...)
}

// Data is p as a DATA frame.
func Data(p []byte) []byte {
	return append(frameHead(nil, frameData, uint64(len(p))), p...)
}

// Get is the fields of a request of path for a.example.
func Get(method, path string) []string {
	return []string{":method", method, ":scheme", "https", ":authority", "a.example", ":path", path}
}

// Response reads a response: its :status and body (DATA payloads). A
// reset stream returns the error.
func Response(st *quic.Stream) (status string, body []byte, err error) {
	r := bufio.NewReader(st)
	for {
		typ, err := quicvarint.Read(r)
		if err == io.EOF {
			return status, body, nil
		}
		if err != nil {
			return status, body, err
		}
		length, err := quicvarint.Read(r)
		if err != nil {
			return status, body, noEOF(err)
		}
		if length > maxFrame {
			return status, body, errFrameTooLarge
		}
		p := make([]byte, length)
		if _, err := io.ReadFull(r, p); err != nil {
			return status, body, noEOF(err)
		}
		switch typ {
		case frameHeaders:
			next := qpack.NewDecoder().Decode(p)
			for {
				f, err := next()
				if err != nil {
					break
				}
				if f.Name == ":status" {
					status = f.Value
				}
			}
		case frameData:
			body = append(body, p...)
		}
	}
}

// noEOF makes a stream that ends inside a frame an error.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Request sends a request of fields with an optional body on a new
// stream and reads the response; a connection that is gone is an error.
func Request(t testing.TB, c *quic.Conn, body []byte, fields ...string) (string, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	st, err := c.OpenStreamSync(ctx)
	if err != nil {
		return "", nil, err // the connection is gone (refused, closed)
	}
	b := Headers(fields...)
	if body != nil {
		b = append(b, Data(body)...)
	}
	st.Write(b)
	st.Close()
	return Response(st)
}
