package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"testing"

	"github.com/quic-go/qpack"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/quicvarint"
)

// A raw HTTP/3 client for the tests that must break the rules or act at
// the stream level (resets, floods, early data): requests are written
// frame by frame on quic-go streams.

func h3RawTLS(p *pki) *tls.Config {
	return &tls.Config{RootCAs: p.ca.Pool, ServerName: "a.example", NextProtos: []string{h3ALPN}}
}

// h3RawDial opens a QUIC connection and its control stream (SETTINGS).
func h3RawDial(t *testing.T, addr string, tc *tls.Config, qc *quic.Config) *quic.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if qc == nil {
		qc = &quic.Config{}
	}
	c, err := quic.DialAddr(ctx, addr, tc, qc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseWithError(0, "") })
	h3RawControl(t, c)
	return c
}

func h3RawControl(t *testing.T, c *quic.Conn) {
	t.Helper()
	ctrl, err := c.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	b := quicvarint.Append(nil, h3StreamControl)
	b = appendH3FrameHead(b, h3FrameSettings, 0)
	ctrl.Write(b)
}

// h3RawHeaders encodes fields (name, value pairs) as a HEADERS frame.
func h3RawHeaders(fields ...string) []byte {
	var buf bytes.Buffer
	enc := qpack.NewEncoder(&buf)
	for i := 0; i+1 < len(fields); i += 2 {
		enc.WriteField(qpack.HeaderField{Name: fields[i], Value: fields[i+1]})
	}
	return append(appendH3FrameHead(nil, h3FrameHeaders, uint64(buf.Len())), buf.Bytes()...)
}

func h3RawData(p []byte) []byte {
	return append(appendH3FrameHead(nil, h3FrameData, uint64(len(p))), p...)
}

// h3RawGet is the fields of a GET of path.
func h3RawGet(method, path string) []string {
	return []string{":method", method, ":scheme", "https", ":authority", "a.example", ":path", path}
}

// h3RawResponse reads a response: its :status and body (DATA payloads).
// A reset stream returns the error.
func h3RawResponse(st *quic.Stream) (status string, body []byte, err error) {
	var fr h3Reader
	fr.reset(st)
	for {
		typ, length, err := fr.next()
		if err == io.EOF {
			return status, body, nil
		}
		if err != nil {
			return status, body, err
		}
		p := make([]byte, length)
		if err := fr.payloadInto(p); err != nil {
			return status, body, err
		}
		switch typ {
		case h3FrameHeaders:
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
		case h3FrameData:
			body = append(body, p...)
		}
	}
}

// h3RawRequest sends a request of fields with an optional body on a new
// stream and reads the response; a connection that is gone is an error.
func h3RawRequest(t *testing.T, c *quic.Conn, body []byte, fields ...string) (string, []byte, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	st, err := c.OpenStreamSync(ctx)
	if err != nil {
		return "", nil, err // the connection is gone (refused, closed)
	}
	b := h3RawHeaders(fields...)
	if body != nil {
		b = append(b, h3RawData(body)...)
	}
	st.Write(b)
	st.Close()
	return h3RawResponse(st)
}
