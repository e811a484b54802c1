package upstream

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// Kind is how an attempt failed, in the terms the attempt driver decides
// on. The I/O layers turn their errors into kinds: Classify for I/O
// errors, and the kinds only they can tell (Handshake, ClientBody, Gone,
// Cancelled) directly.
type Kind uint8

const (
	// Refused: the connection could not be made (refused, unreachable,
	// no route): nothing was sent.
	Refused Kind = iota + 1
	// ConnectTimeout: the connection (or its TLS handshake) did not
	// complete in time.
	ConnectTimeout
	// Handshake: the TLS handshake failed.
	Handshake
	// Lost: the connection ended (EOF, reset, broken pipe, closed)
	// before a whole response head. On a pooled connection before any
	// response byte, it is the stale-connection case (ResendStale).
	Lost
	// HeadTimeout: the response head did not come in time.
	HeadTimeout
	// Broken: any other failure before the head (a malformed response,
	// another I/O error).
	Broken
	// Cancelled: the upstream cancelled the request (an HTTP/2
	// RST_STREAM with CANCEL): it says nothing about the target's health
	// and is not retried.
	Cancelled
	// ClientBody: the client's request body failed (malformed, too
	// large, stalled): nothing to say about the target.
	ClientBody
	// Gone: the client went away: nobody to answer.
	Gone
)

func (k Kind) String() string {
	switch k {
	case Refused:
		return "refused"
	case ConnectTimeout:
		return "connect_timeout"
	case Handshake:
		return "handshake"
	case Lost:
		return "lost"
	case HeadTimeout:
		return "head_timeout"
	case Broken:
		return "broken"
	case Cancelled:
		return "cancelled"
	case ClientBody:
		return "client_body"
	case Gone:
		return "gone"
	}
	return "unknown"
}

// Outcome is the kind as the policy counts it (passive health, retry
// conditions).
func (k Kind) Outcome() Outcome {
	switch k {
	case Refused, ConnectTimeout, Handshake:
		return ConnectFailure
	case HeadTimeout:
		return Timeout
	case Lost, Broken:
		return Reset
	}
	return Canceled
}

// reply is the answer when the attempt of kind k was the last.
func (k Kind) reply() Reply {
	switch k {
	case ConnectTimeout, HeadTimeout:
		return GatewayTimeout
	case ClientBody:
		return BadRequestBody
	case Gone:
		return NoReply
	}
	return BadGateway
}

// Classify is the one classification of an attempt's I/O errors, for
// every engine. connecting: the error came while the connection was being
// made (dial, connect). A timeout is ConnectTimeout or HeadTimeout; a
// connection that ended (io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
// ECONNRESET, EPIPE) is Lost; any other error while connecting is
// Refused, and after it Broken.
func Classify(err error, connecting bool) Kind {
	var te interface{ Timeout() bool }
	timeout := errors.As(err, &te) && te.Timeout()
	switch {
	case connecting && timeout:
		return ConnectTimeout
	case connecting:
		return Refused
	case timeout:
		return HeadTimeout
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return Lost
	}
	return Broken
}
