package trace

import (
	crand "crypto/rand"
	"encoding/binary"
	"strconv"
	"sync/atomic"
)

// MaxRequestID bounds a client's request ID: longer ones are replaced. 128
// bytes fits every common form (UUIDs 36, AWS X-Amzn-Trace-Id ~70) and
// keeps logs and upstream heads bounded.
const MaxRequestID = 128

// ValidRequestID reports whether a client's request ID may be kept: 1 to
// MaxRequestID bytes of letters, digits and - _ . : / + = @ (enough for
// UUIDs, base64 and the usual prefixed forms; nothing that could split a
// header, a log field or a shell word).
func ValidRequestID(b []byte) bool {
	if len(b) == 0 || len(b) > MaxRequestID {
		return false
	}
	for _, c := range b {
		if !idByte[c] {
			return false
		}
	}
	return true
}

var idByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			t[c] = true
		}
	}
	for _, c := range "-_.:/+=@" {
		t[c] = true
	}
	return t
}()

// prefix is 12 random hex digits drawn at start: IDs of two processes (or
// of one process before and after a restart) differ with overwhelming
// probability.
var prefix = func() string {
	var b [8]byte
	crand.Read(b[:])
	return strconv.FormatUint(binary.LittleEndian.Uint64(b[:])&(1<<48-1)|1<<48, 16)[1:]
}()

// connSeq numbers connections (one atomic add per connection, none per
// request).
var connSeq atomic.Uint64

// Widths of a generated ID's parts, in hex digits: fixed, so that every
// response of a connection has the same length (and logs line up). 40 bits
// number a trillion connections; 32 bits four billion requests on one
// connection before its counter wraps.
const (
	connDigits = 10
	seqDigits  = 8
)

// IDGen generates request IDs for one connection: prefix-conn-seq in
// fixed-width hex (32 bytes). Not safe for concurrent use (a connection
// serves one request at a time).
type IDGen struct {
	conn uint64
	seq  uint64
}

// Reset gives the generator a new connection number.
func (g *IDGen) Reset() {
	g.conn, g.seq = connSeq.Add(1), 0
}

// Append appends a new ID to b.
func (g *IDGen) Append(b []byte) []byte {
	if g.conn == 0 {
		g.Reset()
	}
	g.seq++
	b = append(b, prefix...)
	b = append(b, '-')
	b = appendHexN(b, g.conn, connDigits)
	b = append(b, '-')
	return appendHexN(b, g.seq, seqDigits)
}

// appendHexN appends the low n hex digits of v (n <= 16), written back
// to front into a fixed array and appended once.
func appendHexN(b []byte, v uint64, n int) []byte {
	var d [16]byte
	for i := n - 1; i >= 0; i-- {
		d[i] = hexDigits[v&0xf]
		v >>= 4
	}
	return append(b, d[:n]...)
}
