package main

import (
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const (
	// h2Preface is the client connection preface (RFC 9113 §3.4).
	h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	// h2RequestBound bounds one request, from the dial to its answer.
	h2RequestBound = 5 * time.Second
	// h2MaxFrames bounds the frames read while waiting for one answer.
	h2MaxFrames = 1000
	// hpackTableSize is HPACK's default dynamic table size, which the
	// clients never change.
	hpackTableSize = 4096
)

var errNoH2 = errors.New("attack: the TLS listener did not negotiate h2")

// h2dial connects to addr, over TLS with ALPN h2 if useTLS, and sends the
// connection preface and an empty SETTINGS frame. The certificate is not
// checked: the suite made it.
func h2dial(addr string, useTLS bool, deadline time.Time) (net.Conn, *http2.Framer, error) {
	c, err := net.DialTimeout("tcp", addr, dialTimeout)
	if err != nil {
		return nil, nil, err
	}
	c.SetDeadline(deadline)
	if useTLS {
		tc := tls.Client(c, &tls.Config{ServerName: "public.example", NextProtos: []string{"h2"}, InsecureSkipVerify: true})
		if err := tc.Handshake(); err != nil {
			c.Close()
			return nil, nil, err
		}
		if tc.ConnectionState().NegotiatedProtocol != "h2" {
			c.Close()
			return nil, nil, errNoH2
		}
		c = tc
	}
	if _, err := io.WriteString(c, h2Preface); err != nil {
		c.Close()
		return nil, nil, err
	}
	fr := http2.NewFramer(c, c)
	if err := fr.WriteSettings(); err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, fr, nil
}

// encodeFields HPACK-encodes fields as given: names and values may hold
// any byte, which is the point.
func encodeFields(fields []hpack.HeaderField) []byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	for _, f := range fields {
		enc.WriteField(f)
	}
	return buf.Bytes()
}

// h2outcome is how one HTTP/2 request ended.
type h2outcome struct {
	// status is the answer's :status; 0 if none came.
	status int
	// rst: the stream was reset with rstCode.
	rst     bool
	rstCode http2.ErrCode
	// goaway: the server sent GOAWAY with goawayCode.
	goaway     bool
	goawayCode http2.ErrCode
	// closed: the connection ended before an answer.
	closed bool
	// timeout: nothing ended the stream within the bound.
	timeout bool
	// err: the connection could not be made (nothing was sent).
	err error
}

// String is the outcome as the report prints it: "200", "RST
// PROTOCOL_ERROR", "GOAWAY PROTOCOL_ERROR", "closed", "no answer".
func (o h2outcome) String() string {
	switch {
	case o.err != nil:
		return "error: " + o.err.Error()
	case o.status != 0:
		return fmt.Sprint(o.status)
	case o.rst:
		return "RST " + o.rstCode.String()
	case o.goaway:
		return "GOAWAY " + o.goawayCode.String()
	case o.timeout:
		return "no answer"
	}
	return "closed"
}

// h2Request sends one request, the HEADERS fields with END_STREAM, on
// stream 1 of a new connection, and waits for its answer's status, a
// reset, or the end of the connection.
func h2Request(addr string, useTLS bool, fields []hpack.HeaderField) h2outcome {
	deadline := time.Now().Add(h2RequestBound)
	c, fr, err := h2dial(addr, useTLS, deadline)
	if err != nil {
		return h2outcome{err: err}
	}
	defer c.Close()
	const stream = 1
	if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: stream, BlockFragment: encodeFields(fields), EndStream: true, EndHeaders: true}); err != nil {
		return h2outcome{closed: true}
	}
	var out h2outcome
	dec := hpack.NewDecoder(hpackTableSize, nil)
	var block []byte
	for range h2MaxFrames {
		f, err := fr.ReadFrame()
		if err != nil {
			out.timeout = errors.Is(err, os.ErrDeadlineExceeded)
			out.closed = !out.timeout
			return out
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() {
				fr.WriteSettingsAck()
			}
		case *http2.GoAwayFrame:
			out.goaway, out.goawayCode = true, f.ErrCode
			if f.LastStreamID < stream {
				return out
			}
		case *http2.RSTStreamFrame:
			if f.StreamID == stream {
				out.rst, out.rstCode = true, f.ErrCode
				return out
			}
		case *http2.HeadersFrame:
			if f.StreamID != stream {
				continue
			}
			block = append(block[:0], f.HeaderBlockFragment()...)
			if f.HeadersEnded() {
				out.status = statusOf(dec, block)
				return out
			}
		case *http2.ContinuationFrame:
			if f.StreamID != stream {
				continue
			}
			block = append(block, f.HeaderBlockFragment()...)
			if f.HeadersEnded() {
				out.status = statusOf(dec, block)
				return out
			}
		}
	}
	out.timeout = true
	return out
}

// statusOf decodes a response header block and returns its :status, or
// 0 if it has none that parses.
func statusOf(dec *hpack.Decoder, block []byte) int {
	fields, err := dec.DecodeFull(block)
	if err != nil {
		return 0
	}
	for _, f := range fields {
		if f.Name == ":status" {
			var n int
			if _, err := fmt.Sscanf(f.Value, "%d", &n); err == nil {
				return n
			}
		}
	}
	return 0
}
