package server

import (
	"bytes"
	"errors"

	"golang.org/x/net/http2/hpack"
)

// hpackDec decodes the request header blocks of an HTTP/2 connection
// (RFC 7541) straight into the block's h2decode, in place of x/net's
// hpack.Decoder, which cost 10 % of an h2c origin's CPU in a profile
// (h2load -c4 -m25): a callback with a HeaderField per field, a copy of
// every literal into a new string, and a pooled buffer per Huffman string.
// Here a field is passed on (to h2decode.field) as views of the block, or
// of a scratch buffer for Huffman strings, and copied only where it is
// kept; the dynamic table keeps copies of its own. Huffman decoding is
// x/net's.
//
// Its verdicts are x/net's, error for error (FuzzHPACKDec compares the two
// on any input), so what h2spec and clients saw does not change:
//   - an index of 0 or past the tables, an integer over 63 bits, a
//     truncated field, bad Huffman code or padding: an error;
//   - a string longer than maxStr, encoded or decoded, or a field from a
//     table with a name or value longer: an error, before the string is
//     decoded (the HPACK bomb is also bounded per list, in h2decode.field);
//   - a dynamic table size update over our SETTINGS (h2TableSize): an
//     error; after the block's first representation, one is an error
//     unless the table is empty (x/net's reading of §4.2).
type hpackDec struct {
	// ents is the dynamic table, oldest first: index 62 is the last.
	ents    []hpackDecEntry
	size    int // §4.1
	max     int // the table's maximum size, as last updated
	allowed int // the most an update may set: our SETTINGS_HEADER_TABLE_SIZE
	maxStr  int // the longest string accepted
	// name and value hold Huffman-decoded strings until the field is
	// passed on.
	name, value bytes.Buffer
}

// errHPACK is any decoding error: the connection ends with
// COMPRESSION_ERROR (§4.3 of RFC 9113), whatever the cause.
var errHPACK = errors.New("server: hpack: invalid header block")

func (d *hpackDec) init(tableSize, maxStr int) {
	d.max, d.allowed, d.maxStr = tableSize, tableSize, maxStr
}

// hpackDecEntry is an entry of the decoder's dynamic table. vetted: the
// sink found its name and value sound (hpackSink.emit), so a block that
// names the entry again, as most blocks of a connection do, is not
// checked byte by byte again.
type hpackDecEntry struct {
	hpackEntry
	vetted bool
}

// hpackSink takes the decoded fields of a block, in order: name and
// value view memory the decoder reuses, so it copies what it keeps.
// vetted says the sink found this name and value sound before (a table
// entry's, or the static table's, which all are); emit reports whether
// they are sound, as far as it checked them, whatever else it makes of
// the field.
type hpackSink interface {
	emit(name, value string, vetted bool) (sound bool)
}

// decode decodes one whole header block into out.
func (d *hpackDec) decode(b []byte, out hpackSink) error {
	first := true
	for len(b) > 0 {
		c := b[0]
		var err error
		switch {
		case c&0x80 != 0: // §6.1 indexed
			var i uint64
			if i, b, err = hpackInt(7, b); err != nil {
				return err
			}
			if e := d.entry(i); e != nil {
				if len(e.name) > d.maxStr || len(e.value) > d.maxStr {
					return errHPACK
				}
				if out.emit(e.name, e.value, e.vetted) {
					e.vetted = true
				}
				break
			}
			name, value, ok := d.at(i)
			if !ok || len(name) > d.maxStr || len(value) > d.maxStr {
				return errHPACK
			}
			out.emit(name, value, true) // the static table's
		case c&0xe0 == 0x20: // §6.3 dynamic table size update
			if !first && d.size > 0 {
				return errHPACK
			}
			var v uint64
			if v, b, err = hpackInt(5, b); err != nil {
				return err
			}
			if v > uint64(d.allowed) {
				return errHPACK
			}
			d.max = int(v)
			d.evict(0)
		default: // §6.2 literals: incremental indexing (01), without (0000), never (0001)
			prefix, index := uint8(4), false
			if c&0xc0 == 0x40 {
				prefix, index = 6, true
			}
			var name, value string
			if name, value, b, err = d.literal(prefix, b); err != nil {
				return err
			}
			if len(name) > d.maxStr {
				return errHPACK // a name from a table, as x/net checks
			}
			sound := out.emit(name, value, false)
			if index {
				d.add(name, value, sound)
			}
		}
		first = false
	}
	return nil
}

// literal reads a literal field whose name index has an n-bit prefix.
func (d *hpackDec) literal(n uint8, b []byte) (name, value string, rest []byte, err error) {
	var i uint64
	if i, b, err = hpackInt(n, b); err != nil {
		return "", "", nil, err
	}
	if i > 0 {
		var ok bool
		if name, _, ok = d.at(i); !ok {
			return "", "", nil, errHPACK
		}
	} else if name, b, err = d.str(b, &d.name); err != nil {
		return "", "", nil, err
	}
	if value, b, err = d.str(b, &d.value); err != nil {
		return "", "", nil, err
	}
	return name, value, b, nil
}

// str reads a string literal (§5.2): a view of b when raw, of scratch
// when Huffman-coded.
func (d *hpackDec) str(b []byte, scratch *bytes.Buffer) (string, []byte, error) {
	if len(b) == 0 {
		return "", nil, errHPACK
	}
	huff := b[0]&0x80 != 0
	n, b, err := hpackInt(7, b)
	if err != nil {
		return "", nil, err
	}
	if n > uint64(d.maxStr) || n > uint64(len(b)) {
		return "", nil, errHPACK
	}
	s := b[:n]
	b = b[n:]
	if !huff {
		return bytesView(s), b, nil
	}
	scratch.Reset()
	if _, err := hpack.HuffmanDecode(scratch, s); err != nil || scratch.Len() > d.maxStr {
		return "", nil, errHPACK
	}
	return bytesView(scratch.Bytes()), b, nil
}

// at returns the field at index i (1-based; the dynamic table follows the
// static one, newest first).
func (d *hpackDec) at(i uint64) (name, value string, ok bool) {
	switch {
	case i == 0:
		return "", "", false
	case i <= uint64(len(hpackStatic)):
		e := &hpackStatic[i-1]
		return e[0], e[1], true
	}
	if e := d.entry(i); e != nil {
		return e.name, e.value, true
	}
	return "", "", false
}

// entry returns the dynamic table's entry at index i, nil if i is not
// one.
func (d *hpackDec) entry(i uint64) *hpackDecEntry {
	if i <= uint64(len(hpackStatic)) {
		return nil
	}
	j := i - uint64(len(hpackStatic)) - 1
	if j >= uint64(len(d.ents)) {
		return nil
	}
	return &d.ents[len(d.ents)-1-int(j)]
}

// add puts a field in the table (§4.4): entries are evicted from the
// oldest until it fits; one larger than the table empties it and is not
// kept. The strings are copied: name and value view the block. vetted:
// the sink found them sound.
func (d *hpackDec) add(name, value string, vetted bool) {
	n := hpackEntryExtra + len(name) + len(value)
	if n > d.max {
		d.evict(d.max + 1)
		return
	}
	d.evict(n)
	if i := hpackStaticName(name); i > 0 {
		name = hpackStatic[i-1][0]
	} else {
		name = string(append([]byte(nil), name...))
	}
	d.ents = append(d.ents, hpackDecEntry{hpackEntry{name, string(append([]byte(nil), value...))}, vetted})
	d.size += n
}

// evict drops the oldest entries until room more bytes fit under max.
func (d *hpackDec) evict(room int) {
	k := 0
	for k < len(d.ents) && d.size+room > d.max {
		d.size -= hpackEntryExtra + len(d.ents[k].name) + len(d.ents[k].value)
		d.ents[k] = hpackDecEntry{}
		k++
	}
	if k > 0 {
		d.ents = d.ents[k:]
	}
}

// hpackInt reads an integer with an n-bit prefix (§5.1), as x/net does:
// an error past 63 bits or at the block's end.
func hpackInt(n uint8, b []byte) (uint64, []byte, error) {
	limit := uint64(1)<<n - 1
	v := uint64(b[0]) & limit
	if v < limit {
		return v, b[1:], nil
	}
	var m uint
	for i := 1; i < len(b); i++ {
		c := b[i]
		v += uint64(c&0x7f) << m
		if c&0x80 == 0 {
			return v, b[i+1:], nil
		}
		m += 7
		if m >= 63 {
			return 0, nil, errHPACK
		}
	}
	return 0, nil, errHPACK
}
