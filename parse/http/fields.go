package http

import (
	"encoding/binary"

	"github.com/simdedge/simdedge/internal/ascii"
)

// Field lines: RFC 9112 §5 (field-line = field-name ":" OWS field-value OWS)
// and RFC 9110 §5.5 (field values). This file walks the field lines of a
// head once its start line has been parsed.

// Header is one field line: views into the parsed buffer, valid while that
// buffer is (see Request). Value has no leading or trailing whitespace.
// Each view's capacity ends with it, so an append to one copies instead of
// writing over the buffer.
type Header struct {
	Name  []byte
	Value []byte
}

// Headers is the field lines of a message in the order received.
type Headers []Header

// Get returns the value of the first field named name (ASCII
// case-insensitive) and whether there was one. It does not allocate.
//
// Get, Count and Index stay calls (go:noinline): with the fold inlined
// into them they fit the inlining budget, and inlined into the server's
// per-request code they made a static response cost ~7 % more CPU
// (BenchmarkServeStatic, user+sys time of 2M requests, GOMAXPROCS=1, 10
// interleaved runs, 2-CPU VM, Go 1.26); as calls they cost what they did
// before.
//
//go:noinline
func (h Headers) Get(name string) (value []byte, ok bool) {
	for i := range h {
		if ascii.EqualFold(h[i].Name, name) {
			return h[i].Value, true
		}
	}
	return nil, false
}

// Count returns how many fields are named name (ASCII case-insensitive).
// It stays a call, as Get does.
//
//go:noinline
func (h Headers) Count(name string) int {
	n := 0
	for i := range h {
		if ascii.EqualFold(h[i].Name, name) {
			n++
		}
	}
	return n
}

// Index returns the index of the first field at or after i named name, or
// -1; callers loop over repeated fields with it without allocating. It
// stays a call, as Get does.
//
//go:noinline
func (h Headers) Index(name string, i int) int {
	for ; i < len(h); i++ {
		if ascii.EqualFold(h[i].Name, name) {
			return i
		}
	}
	return -1
}

// EqualFold reports whether b equals s under ASCII case folding, the
// comparison RFC 9110 §5.1 prescribes for field names.
// It is internal/ascii's, kept here for the library's users.
func EqualFold(b []byte, s string) bool { return ascii.EqualFold(b, s) }

// fieldKind names the fields that influence framing or that the parser
// reports; all others are only recorded.
type fieldKind uint8

const (
	fieldOther fieldKind = iota
	fieldHost
	fieldExpect
	fieldUpgrade
	fieldConnection
	fieldContentLength
	fieldTransferEncoding
)

// framingFields are the fields kindOf recognises, by lower-case name. The
// names differ in length, which kindOf's table relies on.
var framingFields = [...]struct {
	name string
	kind fieldKind
}{
	{"host", fieldHost},
	{"expect", fieldExpect},
	{"upgrade", fieldUpgrade},
	{"connection", fieldConnection},
	{"content-length", fieldContentLength},
	{"transfer-encoding", fieldTransferEncoding},
}

// foldedKey is a name of 4 to 24 bytes as words with every byte ORed with
// 0x20 (foldedWords): its first and last 8 bytes (4 for a name shorter
// than 8) and, past 16 bytes, bytes 8 to 16, so that every byte is in one
// of them.
type foldedKey struct{ lo, hi, mid uint64 }

// foldedWords folds b (4 <= len(b) <= 24) into its key. OR-ing 0x20 folds
// ASCII letters to lower case and leaves every other byte that can meet
// a lower-case letter or "-" of a literal unchanged: a byte that folds
// onto a letter is that letter in either case, and only CR folds onto
// "-", which no name or value holds. So for the names and values compared
// here, equal keys mean equal under ASCII case folding.
func foldedWords(b []byte) foldedKey {
	const fold8, fold4 = lanes01 * 0x20, 0x20202020
	if len(b) < 8 {
		return foldedKey{
			lo: uint64(binary.LittleEndian.Uint32(b) | fold4),
			hi: uint64(binary.LittleEndian.Uint32(b[len(b)-4:]) | fold4),
		}
	}
	k := foldedKey{
		lo: binary.LittleEndian.Uint64(b) | fold8,
		hi: binary.LittleEndian.Uint64(b[len(b)-8:]) | fold8,
	}
	if len(b) > 16 {
		k.mid = binary.LittleEndian.Uint64(b[8:]) | fold8
	}
	return k
}

// framingByLen[n] is the framing field whose name has n bytes, if any,
// with its key and its first letter (maybeFraming's quick test).
var framingByLen = func() (t [32]struct {
	key   foldedKey
	first byte
	kind  fieldKind
}) {
	for _, f := range framingFields {
		e := &t[len(f.name)]
		e.key, e.first, e.kind = foldedWords([]byte(f.name)), f.name[0], f.kind
	}
	return t
}()

// kindOf recognises the framing fields: one table entry by length, then
// one comparison of two or three words. name is all tchar.
func kindOf(name []byte) fieldKind {
	if len(name) >= len(framingByLen) {
		return fieldOther
	}
	e := &framingByLen[len(name)]
	if e.kind != fieldOther && foldedWords(name) == e.key {
		return e.kind
	}
	return fieldOther
}

// maybeFraming reports whether name could be a framing field: false means
// kindOf(name) is fieldOther. It costs one load and compare, so most
// fields skip kindOf. name is non-empty.
func maybeFraming(name []byte) bool {
	return len(name) < len(framingByLen) && framingByLen[len(name)].first == name[0]|0x20
}

// more is the error for input that ends before the head does: ErrNeedMore,
// or lim when the head already fills its limit and more bytes could not
// make it valid.
func more(capped bool, lim error) error {
	if capped {
		return lim
	}
	return ErrNeedMore
}

// lineEnd checks the line terminator at buf[c], the first control byte
// after a line's content, and returns the offset just past it. HTAB is not
// handled here (callers step over it where it is allowed).
func (p *Parser) lineEnd(buf []byte, c int, bad error) (int, error) {
	switch buf[c] {
	case '\r':
		if c+1 >= len(buf) {
			return 0, ErrNeedMore
		}
		if buf[c+1] != '\n' {
			return 0, ErrBareCR
		}
		return c + 2, nil
	case '\n':
		if !p.bareLF {
			return 0, ErrBareLF
		}
		return c + 1, nil
	}
	return 0, bad
}

// parseFields walks field lines from pos to the empty line that ends the
// head and returns the offset just past that line. It appends each field
// to *hdrs and records framing fields in f.
//
// The walk is one chain of dependent steps per line (each line starts
// where the last ended), so the line end is found first, straight from
// the line's start: c, the first control byte at or after pos. Every byte
// of a field name is a tchar, which is never a control byte, so c is at or
// past the name's end ne, and when buf[ne] is the colon it is exactly the
// first control byte of the value. The name and value are then worked out
// from pos and c beside the next line's walk, not before it.
func (p *Parser) parseFields(s *scanner, pos int, capped bool, hdrs *Headers, f *framing) (int, error) {
	buf := s.buf
	hs := *hdrs
	start := pos
	var pend pending
	for {
		if s.masks {
			var short bool
			pos, hs, short = s.fastFields(pos, hs, p.maxHeaders, f, &pend)
			if pend.n > 0 {
				if err := recordPending(hs, &pend, f); err != nil {
					*hdrs = hs
					return 0, err
				}
			}
			// Out of classified bytes: grow the window and go on, if
			// it can grow (each round consumes a line or grows).
			if short && s.grow() {
				continue
			}
		}
		if pos >= len(buf) {
			*hdrs = hs
			return 0, more(capped, ErrHeaderTooLarge)
		}
		switch c := buf[pos]; {
		case c == '\r' || c == '\n':
			*hdrs = hs
			// The empty line ending the head (RFC 9112 §2.1).
			end, err := p.lineEnd(buf, pos, ErrBareCR)
			if err == ErrNeedMore {
				return 0, more(capped, ErrHeaderTooLarge)
			}
			return end, err
		case ascii.IsOWS(c):
			*hdrs = hs
			// RFC 9112 §5.2: obs-fold is rejected; §2.2: whitespace
			// between the start line and the first field is rejected.
			if pos == start {
				return 0, ErrLeadingWhitespace
			}
			return 0, ErrObsFold
		}

		// The two searches, their fast paths inline (Go's inliner will
		// not take a search with its slow call: the call alone exceeds
		// its budget). The control scan crosses
		// blocks in place (ctlInWindow; values are often longer than
		// what is left of a block); only leaving the window calls out,
		// and it comes second so that a line crossing the window's end
		// moves the window once. (Most lines never get here: fastFields
		// takes them.)
		ne, ok := s.nonTcharInBlock(pos)
		if !ok {
			ne = s.nextNonTcharSlow(pos)
		}
		c, ok := s.ctlInWindow(pos)
		if !ok {
			c = s.nextCtlSlow(c)
		}
		if ne >= len(buf) {
			*hdrs = hs
			return 0, more(capped, ErrHeaderTooLarge)
		}
		if buf[ne] != ':' {
			*hdrs = hs
			if ascii.IsOWS(buf[ne]) && ne > pos {
				return 0, ErrSpaceBeforeColon
			}
			return 0, ErrInvalidHeaderName
		}
		if ne == pos {
			*hdrs = hs
			return 0, ErrInvalidHeaderName // empty name
		}
		name := buf[pos:ne:ne]

		// HTAB is the one control byte a value may hold: step over it.
		for c < len(buf) && buf[c] == '\t' {
			c = s.nextCtl(c + 1)
		}
		if c >= len(buf) {
			*hdrs = hs
			return 0, more(capped, ErrHeaderTooLarge)
		}
		next, err := p.lineEnd(buf, c, ErrInvalidHeaderValue)
		if err != nil {
			*hdrs = hs
			if err == ErrNeedMore {
				err = more(capped, ErrHeaderTooLarge)
			}
			return 0, err
		}
		// The value is what lies between the colon and c, less OWS on
		// both sides; c is past every OWS byte the skip can reach.
		v := ne + 1
		for v < c && ascii.IsOWS(buf[v]) {
			v++
		}
		e := c
		for e > v && ascii.IsOWS(buf[e-1]) {
			e--
		}
		value := buf[v:e:e]

		if len(hs) >= p.maxHeaders {
			*hdrs = hs
			return 0, ErrTooManyHeaders
		}
		// Grow by one and fill the element in place: append of a
		// composite literal builds the 48-byte Header on the stack and
		// copies it with wide loads that miss store forwarding, which
		// cost a quarter of the walk (measured, Go 1.26, AVX-512 host).
		if len(hs) < cap(hs) {
			hs = hs[:len(hs)+1]
		} else {
			hs = append(hs, Header{})
		}
		h := &hs[len(hs)-1]
		h.Name, h.Value = name, value
		if k := kindOf(name); k != fieldOther {
			if err := f.field(k, value); err != nil {
				*hdrs = hs
				return 0, err
			}
		}
		pos = next
	}
}
