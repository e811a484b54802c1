package server

import (
	"net"
	"time"
)

// What the first bytes of a connection to a TLS listener say.
type sniffKind uint8

const (
	sniffOther sniffKind = iota // neither: garbage, closed without an answer
	sniffTLS                    // a TLS handshake record
	sniffHTTP                   // plain HTTP: answered 400 in plain text
)

const (
	// sniffBytes is how much the first read of a TLS connection may
	// take; the bytes are replayed to crypto/tls. A ClientHello's first
	// segment fits, so the handshake needs no second read for it.
	sniffBytes = 1 << 10
	// recordHandshake is the TLS content type of a handshake record
	// (RFC 8446 §5.1), the first byte every TLS client sends.
	recordHandshake = 0x16
	// plainHTTPLinger bounds how long the connection of a plain-HTTP
	// client is read and discarded after its 400 (so that closing with
	// unread bytes does not reset the answer away), and plainHTTPDrain
	// how many bytes.
	plainHTTPLinger = time.Second
	plainHTTPDrain  = 64 << 10
)

// sniff classifies the first bytes of a connection: a TLS handshake record
// starts with 0x16, an HTTP/1.x request with the letters of a method
// (RFC 9110 §9: methods are tokens, in practice upper-case letters).
func sniff(b []byte) sniffKind {
	switch {
	case len(b) == 0:
		return sniffOther
	case b[0] == recordHandshake:
		return sniffTLS
	case b[0] >= 'A' && b[0] <= 'Z':
		return sniffHTTP
	}
	return sniffOther
}

// plainHTTPAnswer is what nginx also answers to plain HTTP on an HTTPS
// port: a 400 the client's tools can show.
const plainHTTPAnswer = "HTTP/1.1 400 Bad Request\r\n" +
	"Content-Type: text/plain; charset=utf-8\r\n" +
	"Connection: close\r\n" +
	"Content-Length: 48\r\n\r\n" +
	"The plain HTTP request was sent to HTTPS port.\r\n"

// answerPlainHTTP writes the 400, closes the writing side and reads what
// the client still sends, for at most plainHTTPLinger and plainHTTPDrain
// bytes, so that the close does not reset the answer before it is read.
func answerPlainHTTP(raw net.Conn) {
	deadline := time.Now().Add(plainHTTPLinger)
	raw.SetDeadline(deadline)
	if _, err := raw.Write([]byte(plainHTTPAnswer)); err != nil {
		return
	}
	if cw, ok := raw.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
	var buf [4 << 10]byte
	for left := plainHTTPDrain; left > 0; {
		n, err := raw.Read(buf[:])
		left -= n
		if err != nil {
			return
		}
	}
}
