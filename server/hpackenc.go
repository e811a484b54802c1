package server

import "strings"

// hpackEnc is the HPACK encoder (RFC 7541) of an HTTP/2 connection's
// response field sections, in place of x/net's hpack.Encoder, which cost
// 13 % of an h2c origin's CPU in a profile (h2load -c4 -m25): it hashes
// every field into two maps to search its dynamic table, and keeps a copy
// of each field it indexes in a table of up to 4 KiB per connection.
//
// This one writes what a response needs, in the way H2O and nginx do:
//   - :status from the static table where it is there (200, 204, 206, 304,
//     400, 404, 500);
//   - names from the static table, by a lookup among the names of the same
//     length;
//   - a small dynamic table (hpackEncMax bytes, searched linearly, newest
//     first) for the fields that repeat from response to response: date
//     within its second, content-type, server, cache-control and the like;
//   - fields whose values change with every response (content-length,
//     etag, the request ID, ...) as literals without indexing, so they do
//     not push the repeating ones out; set-cookie never indexed (§7.1.3);
//   - string literals raw, without Huffman coding: the repeating fields
//     are sent as one-byte indexes after their first time, so Huffman
//     would save a few bytes once per connection or second for its cost
//     on every literal.
//
// Our table is smaller than the decoder's (4096 by default): the first
// block says so with a dynamic table size update, so both sides evict the
// same entries, and the decoder's memory for our fields is small too.
type hpackEnc struct {
	// buf is the field section being written (begin to the block's end).
	buf []byte
	// ents is the dynamic table, newest first: ents[i] is index
	// len(hpackStatic)+1+i.
	ents []hpackEntry
	size int // the table's size by §4.1 (each entry's lengths plus 32)
	max  int // the table's maximum size, as last signalled
	// sig is set when a size update is due at the next block's start
	// (§4.2), and low is the smallest maximum since the last one.
	sig bool
	low int
}

type hpackEntry struct{ name, value string }

const (
	// hpackEncMax is the most our dynamic table holds: a date, a
	// content-type, a server and a handful more fields.
	hpackEncMax = 1024
	// hpackEntryExtra is the per-entry overhead in a table's size (§4.1).
	hpackEntryExtra = 32
	// hpackIndexMax is the longest value the encoder indexes: a long value
	// would take the room of several short ones that repeat more.
	hpackIndexMax = 128
)

// init readies a new connection's encoder: its first block sets the
// decoder's table to our size.
func (e *hpackEnc) init() {
	e.max, e.low, e.sig = hpackEncMax, hpackEncMax, true
}

// setPeerMax applies the peer's SETTINGS_HEADER_TABLE_SIZE: our table
// never grows past it (§4.2), and the next block signals the change.
func (e *hpackEnc) setPeerMax(v uint32) {
	m := int(min(v, hpackEncMax))
	e.max = m
	e.low = min(e.low, m)
	e.sig = true
	e.evict(0)
}

// begin starts a field section in e.buf.
func (e *hpackEnc) begin() {
	e.buf = e.buf[:0]
	if e.sig {
		// §4.2: a reduction followed by an increase signals the
		// smallest size, then the final one. x/net's decoder (net/http's
		// client) accepts a second update only when the first has
		// emptied its table, so the first is to 0, and ours is emptied
		// too.
		if e.low < e.max {
			e.int(0x20, 5, 0)
			e.evict(e.max + 1)
		}
		e.int(0x20, 5, e.max)
		e.sig, e.low = false, e.max
	}
}

// field appends one field; name is lowercase.
func (e *hpackEnc) field(name, value string) {
	if name == ":status" {
		if i := hpackStatus(value); i > 0 {
			e.int(0x80, 7, i) // §6.1 indexed
			return
		}
	}
	// The table first: a repeating field (most of a response's) is
	// found there whole, and its name is not looked up in the static
	// table, which the literal below prefers.
	dynName := 0
	for i := range e.ents {
		if x := &e.ents[i]; x.name == name {
			if x.value == value {
				e.int(0x80, 7, len(hpackStatic)+1+i)
				return
			}
			if dynName == 0 {
				dynName = len(hpackStatic) + 1 + i
			}
		}
	}
	nameIdx := hpackStaticName(name)
	if nameIdx == 0 {
		nameIdx = dynName
	}
	switch {
	case name == "set-cookie":
		e.literal(0x10, 4, nameIdx, name, value) // §6.2.3 never indexed
	case !hpackIndexes(name) || len(value) > hpackIndexMax || hpackEntryExtra+len(name)+len(value) > e.max:
		e.literal(0x00, 4, nameIdx, name, value) // §6.2.2 without indexing
	default:
		e.literal(0x40, 6, nameIdx, name, value) // §6.2.1 incremental indexing
		e.add(name, value)
	}
}

// unique appends a field whose value is new with every response as a
// literal without indexing (fieldEnc), whatever its name.
func (e *hpackEnc) unique(name, value string) {
	e.literal(0x00, 4, hpackStaticName(name), name, value)
}

// hpackIndexes reports whether fields named name go into the dynamic
// table: not those whose values differ from response to response.
func hpackIndexes(name string) bool {
	switch name {
	case "content-length", "content-range", "etag", "last-modified", "expires", "age",
		"location", "link", "retry-after", "x-request-id", "traceparent", "tracestate":
		return false
	}
	return true
}

// literal appends a literal field with the representation's first-byte
// pattern and prefix, a name index (0: the name as a string) and the
// value as a raw string.
func (e *hpackEnc) literal(pattern byte, prefix uint, nameIdx int, name, value string) {
	e.int(pattern, prefix, nameIdx)
	if nameIdx == 0 {
		e.str(name)
	}
	e.str(value)
}

// add puts a field at the front of the table, evicting from its end
// (§4.4); the caller made sure the entry fits.
func (e *hpackEnc) add(name, value string) {
	n := hpackEntryExtra + len(name) + len(value)
	e.evict(n)
	if i := hpackStaticName(name); i > 0 {
		name = hpackStatic[i-1][0] // the table's constant, not the caller's string
	} else {
		name = strings.Clone(name)
	}
	e.ents = append(e.ents, hpackEntry{})
	copy(e.ents[1:], e.ents)
	e.ents[0] = hpackEntry{name, strings.Clone(value)}
	e.size += n
}

// evict drops the oldest entries until room more bytes fit under max.
func (e *hpackEnc) evict(room int) {
	for len(e.ents) > 0 && e.size+room > e.max {
		last := e.ents[len(e.ents)-1]
		e.size -= hpackEntryExtra + len(last.name) + len(last.value)
		e.ents[len(e.ents)-1] = hpackEntry{}
		e.ents = e.ents[:len(e.ents)-1]
	}
}

// int appends v as an HPACK integer with an n-bit prefix in a first byte
// that carries pattern in its other bits (§5.1).
func (e *hpackEnc) int(pattern byte, n uint, v int) {
	limit := 1<<n - 1
	if v < limit {
		e.buf = append(e.buf, pattern|byte(v))
		return
	}
	e.buf = append(e.buf, pattern|byte(limit))
	v -= limit
	for v >= 0x80 {
		e.buf = append(e.buf, byte(v)|0x80)
		v >>= 7
	}
	e.buf = append(e.buf, byte(v))
}

// str appends s as a raw string literal (§5.2, H = 0).
func (e *hpackEnc) str(s string) {
	e.int(0, 7, len(s))
	e.buf = append(e.buf, s...)
}

// release drops what an idle connection need not keep (h2conn.rest): the
// block buffer. The table stays, since the peer's decoder holds the same
// entries.
func (e *hpackEnc) release() { e.buf = nil }
