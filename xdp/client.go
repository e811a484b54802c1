package xdp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// ErrUseTCP is returned by DatagramClient when the server answered that
// the response does not fit a datagram.
var ErrUseTCP = errors.New("xdp: response too large for a datagram; use TCP")

// maxDatagram is the largest UDP payload (65535 minus the IPv4 and UDP
// headers); replies are never larger.
const maxDatagram = 65507

// DatagramClient sends HTTP/1.1 requests to the datagram fast path, one
// request per UDP datagram over a plain (kernel) UDP socket, and reads the
// one-datagram response. It is not safe for concurrent use: each request
// waits for its response. UDP may lose either datagram; a request that
// times out returns an error wrapping os.ErrDeadlineExceeded, and retrying
// is the caller's choice (only for idempotent requests).
type DatagramClient struct {
	// Timeout bounds each round trip (default 1s).
	Timeout time.Duration
	conn    *net.UDPConn
	buf     []byte
}

// DialDatagram returns a client for the server at addr ("host:port").
func DialDatagram(addr string) (*DatagramClient, error) {
	ua, err := net.ResolveUDPAddr("udp4", addr)
	if err != nil {
		return nil, err
	}
	c, err := net.DialUDP("udp4", nil, ua)
	if err != nil {
		return nil, err
	}
	return &DatagramClient{Timeout: time.Second, conn: c, buf: make([]byte, maxDatagram)}, nil
}

// RoundTrip sends the raw request bytes as one datagram and returns the raw
// response datagram, valid until the next call. It returns ErrUseTCP (with
// the response) when the server asks for TCP.
func (c *DatagramClient) RoundTrip(req []byte) ([]byte, error) {
	c.discardStale()
	if err := c.conn.SetDeadline(time.Now().Add(c.Timeout)); err != nil {
		return nil, err
	}
	if _, err := c.conn.Write(req); err != nil {
		return nil, fmt.Errorf("xdp: datagram client: %w", err)
	}
	n, err := c.conn.Read(c.buf)
	if err != nil {
		return nil, fmt.Errorf("xdp: datagram client: %w", err)
	}
	resp := c.buf[:n]
	if bytes.HasPrefix(resp, []byte("HTTP/1.1 507 ")) && bytes.Contains(resp, []byte("\r\nSimdedge-Retry: tcp\r\n")) {
		return resp, ErrUseTCP
	}
	return resp, nil
}

// discardStale drops late responses to earlier requests that timed out,
// so they are not taken for the next one's.
func (c *DatagramClient) discardStale() {
	c.conn.SetReadDeadline(time.Now())
	for range 64 {
		if _, err := c.conn.Read(c.buf); err != nil {
			return
		}
	}
}

// Do sends req (written as HTTP/1.1 by net/http; its body must be small
// enough for one datagram) and parses the response. The body is read
// into memory, so the caller may ignore closing it.
func (c *DatagramClient) Do(req *http.Request) (*http.Response, error) {
	var b bytes.Buffer
	if err := req.Write(&b); err != nil {
		return nil, err
	}
	raw, err := c.RoundTrip(b.Bytes())
	if err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(bytes.Clone(raw))), req)
	if err != nil {
		return nil, fmt.Errorf("xdp: datagram client: bad response: %w", err)
	}
	return resp, nil
}

// LocalAddr returns the client's UDP address.
func (c *DatagramClient) LocalAddr() net.Addr { return c.conn.LocalAddr() }

// Close closes the socket.
func (c *DatagramClient) Close() error { return c.conn.Close() }
