package rdma

import (
	"encoding/binary"
	"errors"
)

// The wire protocol of the message transport (transport*.go), pure Go so
// that it is tested and fuzzed without libfabric.
//
// Every message starts with a fixed 24-byte header, little-endian:
//
//	off size field
//	  0    1 version   protoVersion; anything else is refused
//	  1    1 kind      kindRequest ... kindError
//	  2    2 flags     flagMore (rendezvous adverts only), flagEnvelope
//	                   (requests and request adverts); other bits 0
//	  4    4 credits   receive buffers the sender re-posted since its last
//	                   message: the peer may send that many more
//	  8    8 id        request id, chosen by the client, echoed by every
//	                   message about that request (pipelining)
//	 16    4 length    payload bytes after the header; must equal the
//	                   received length minus headerSize
//	 20    4 reserved  zero
//
// A rendezvous advert's payload starts with a 24-byte descriptor (remote
// address, length, key of the sender's registered buffer, all uint64), then
// carries an inline prefix: for a request, its first bytes (the HTTP head),
// which the receiver places in front of the body it reads.
//
// An error message's payload is a 4-byte code (errCode*): codes, never
// text, so that nothing a peer sends is echoed into a local error.
const (
	protoVersion   = 1
	headerSize     = 24
	descriptorSize = 24
	errorSize      = 4
)

// Header field offsets.
const (
	offVersion  = 0
	offKind     = 1
	offFlags    = 2
	offCredits  = 4
	offID       = 8
	offLength   = 16
	offReserved = 20
)

// kind is what a message is.
type kind uint8

const (
	// kindRequest: client to server, one whole request (head and body).
	kindRequest kind = iota + 1
	// kindResponse: server to client, the last (often only) part of a
	// response.
	kindResponse
	// kindContinuation: server to client, a part of a response that more
	// parts follow.
	kindContinuation
	// kindCredit: an explicit credit update, no payload. Sent when credits
	// have piled up with nothing to piggy-back them on.
	kindCredit
	// kindAdvert: a rendezvous advert. Client to server: a request whose
	// body did not fit a message (the payload's inline prefix is the head).
	// Server to client: a response part; flagMore says whether more parts
	// follow. The receiver RDMA-READs the advertised buffer, then answers
	// kindDone.
	kindAdvert
	// kindDone: the rendezvous of request id was read; its sender may
	// reuse the advertised buffer. No payload.
	kindDone
	// kindError: request id failed at the peer; the payload is a code.
	kindError
	kindLast = kindError
)

var kindNames = [...]string{
	kindRequest: "request", kindResponse: "response", kindContinuation: "continuation",
	kindCredit: "credit", kindAdvert: "advert", kindDone: "done", kindError: "error",
}

func (k kind) String() string {
	if k >= kindRequest && k <= kindLast {
		return kindNames[k]
	}
	return "unknown"
}

// flagMore marks a rendezvous advert from the server that more parts of the
// same response follow.
const flagMore uint16 = 1

// flagEnvelope marks a request (kindRequest, or a client's kindAdvert)
// whose bytes are a FlatBuffers request envelope (parse/json/envelope)
// instead of HTTP/1.1. The server verifies it and re-checks its fields
// with the HTTP parser's rules (server.EnvelopeMessage): the flag changes
// the encoding, never the trust.
const flagEnvelope uint16 = 2

// allowedFlags are the flag bits each kind may carry. An advert goes
// either way (flagMore from the server, flagEnvelope from the client); the
// bits are checked here, their direction by the receiving role.
var allowedFlags = [...]uint16{
	kindRequest: flagEnvelope,
	kindAdvert:  flagMore | flagEnvelope,
	kindLast:    0,
}

// Error codes carried by kindError.
const (
	// errCodeTooLarge: the request (or its rendezvous body) exceeds what
	// the receiver accepts.
	errCodeTooLarge uint32 = iota + 1
	// errCodeRendezvous: the RDMA READ of an advertised buffer failed, or
	// no buffer could be registered for it.
	errCodeRendezvous
	// errCodeShutdown: the server is closing and drops the request.
	errCodeShutdown
	errCodeLast = errCodeShutdown
)

// Sentinel errors of the wire protocol. A message that fails to decode is a
// protocol violation: the transport closes the connection.
var (
	ErrProtocol    = errors.New("rdma: protocol violation")
	ErrShortHeader = errors.New("rdma: message shorter than the protocol header")
	ErrVersion     = errors.New("rdma: unsupported protocol version")
	ErrKind        = errors.New("rdma: unknown message kind")
	ErrFlags       = errors.New("rdma: flags not allowed for this message kind")
	ErrReserved    = errors.New("rdma: reserved header field not zero")
	ErrLength      = errors.New("rdma: payload length does not match the message")
	ErrRendezvous  = errors.New("rdma: malformed rendezvous descriptor")
	ErrErrorCode   = errors.New("rdma: malformed or unknown error code")
	ErrCredits     = errors.New("rdma: peer granted more credits than it has buffers")
	// Errors a peer reports for one request (kindError).
	ErrTooLarge       = errors.New("rdma: request larger than the peer accepts")
	ErrRendezvousFail = errors.New("rdma: peer could not read the rendezvous buffer")
	ErrShutdown       = errors.New("rdma: peer is shutting down")
)

var codeErrors = [...]error{
	errCodeTooLarge:   ErrTooLarge,
	errCodeRendezvous: ErrRendezvousFail,
	errCodeShutdown:   ErrShutdown,
}

// header is a decoded message header.
type header struct {
	kind    kind
	flags   uint16
	credits uint32
	id      uint64
	length  uint32
}

// descriptor names a registered buffer of the sender for RDMA READ.
type descriptor struct {
	addr, length, key uint64
}

// put writes h at the start of b (len(b) >= headerSize).
func (h *header) put(b []byte) {
	_ = b[headerSize-1]
	b[offVersion] = protoVersion
	b[offKind] = byte(h.kind)
	binary.LittleEndian.PutUint16(b[offFlags:], h.flags)
	binary.LittleEndian.PutUint32(b[offCredits:], h.credits)
	binary.LittleEndian.PutUint64(b[offID:], h.id)
	binary.LittleEndian.PutUint32(b[offLength:], h.length)
	binary.LittleEndian.PutUint32(b[offReserved:], 0)
}

func (d *descriptor) put(b []byte) {
	_ = b[descriptorSize-1]
	binary.LittleEndian.PutUint64(b[0:], d.addr)
	binary.LittleEndian.PutUint64(b[8:], d.length)
	binary.LittleEndian.PutUint64(b[16:], d.key)
}

// parseHeader decodes and checks the header of the received message msg
// (the whole message, header included). It allocates nothing and wraps
// every failure in ErrProtocol.
func parseHeader(msg []byte) (header, error) {
	var h header
	if len(msg) < headerSize {
		return h, protoErr(ErrShortHeader)
	}
	if msg[offVersion] != protoVersion {
		return h, protoErr(ErrVersion)
	}
	h.kind = kind(msg[offKind])
	if h.kind < kindRequest || h.kind > kindLast {
		return h, protoErr(ErrKind)
	}
	h.flags = binary.LittleEndian.Uint16(msg[offFlags:])
	if h.flags&^allowedFlags[h.kind] != 0 {
		return h, protoErr(ErrFlags)
	}
	if binary.LittleEndian.Uint32(msg[offReserved:]) != 0 {
		return h, protoErr(ErrReserved)
	}
	h.credits = binary.LittleEndian.Uint32(msg[offCredits:])
	h.id = binary.LittleEndian.Uint64(msg[offID:])
	h.length = binary.LittleEndian.Uint32(msg[offLength:])
	if uint64(h.length) != uint64(len(msg)-headerSize) {
		return h, protoErr(ErrLength)
	}
	switch h.kind {
	case kindCredit, kindDone:
		if h.length != 0 {
			return h, protoErr(ErrLength)
		}
	case kindError:
		if h.length != errorSize {
			return h, protoErr(ErrLength)
		}
		if c := binary.LittleEndian.Uint32(msg[headerSize:]); c == 0 || c > errCodeLast {
			return h, protoErr(ErrErrorCode)
		}
	case kindAdvert:
		if h.length < descriptorSize {
			return h, protoErr(ErrRendezvous)
		}
		if binary.LittleEndian.Uint64(msg[headerSize+8:]) == 0 {
			return h, protoErr(ErrRendezvous) // a zero-length rendezvous
		}
	}
	return h, nil
}

// parseDescriptor returns the descriptor of an advert that parseHeader
// accepted, and the inline prefix after it.
func parseDescriptor(msg []byte) (descriptor, []byte) {
	p := msg[headerSize:]
	return descriptor{
		addr:   binary.LittleEndian.Uint64(p[0:]),
		length: binary.LittleEndian.Uint64(p[8:]),
		key:    binary.LittleEndian.Uint64(p[16:]),
	}, p[descriptorSize:]
}

// errorOf returns the sentinel of an error message that parseHeader
// accepted.
func errorOf(msg []byte) error {
	return codeErrors[binary.LittleEndian.Uint32(msg[headerSize:])]
}

// protoError joins ErrProtocol and a specific sentinel without allocating
// per call: the pairs are built once.
type protoError struct{ err error }

func (e *protoError) Error() string   { return e.err.Error() }
func (e *protoError) Unwrap() []error { return []error{ErrProtocol, e.err} }

var protoErrors = map[error]*protoError{}

func init() {
	for _, e := range []error{ErrShortHeader, ErrVersion, ErrKind, ErrFlags, ErrReserved, ErrLength,
		ErrRendezvous, ErrErrorCode, ErrCredits} {
		protoErrors[e] = &protoError{e}
	}
}

func protoErr(e error) error { return protoErrors[e] }
