package url

// Parse parses input, resolved against base when base is non-nil (the
// standard's "API URL parser" with the new URL(input, base) semantics).
//
// A successful Parse makes one allocation (for hrefs up to about 32 KiB,
// and except for hosts whose IDNA processing allocates). When the href is
// the input itself (the input is already in serialized form, as 99% of
// the kasztp corpus and 90% of userbait are), the URL views the input
// string instead of copying it, and that allocation is the URL alone;
// the URL then keeps input alive. Otherwise the URL and its href buffer,
// sized once for the exact href length, share one object (see newURL).
// The parse itself runs in scratch storage: a stack buffer for the fast
// path, a pooled record for the state machine. A failed Parse allocates
// the returned *Error.
//
// input must be an immutable string, as Go strings are: a string viewed
// over a byte buffer that is later reused (unsafe.String) must be cloned
// first, or parsed with ParseInto, which always copies. That includes the
// strings this package's getters return, which change with their URL's
// next ParseInto: Parse(u.Href(), nil) may view u's buffer, so Clone the
// result if u is reused afterwards.
func Parse(input string, base *URL) (*URL, error) {
	if len(input) > MaxInputLen {
		return nil, &Error{Op: "parse", Input: input, Err: ErrTooLong}
	}
	var t URL
	if _, res := t.fastPath(input, nil, fastView); res == fastSame {
		// Most inputs: nothing written, not even to the stack buffer.
		u := new(URL)
		u.components = t.components
		u.viewInput(input)
		return u, nil
	}
	var stack [stackHrefLen]byte
	href, same, r, err := t.parseScratch(input, base, stack[:0])
	if err != nil {
		putRecord(r)
		return nil, &Error{Op: "parse", Input: input, Err: err}
	}
	var u *URL
	if same {
		u = new(URL)
		u.components = t.components
		u.viewInput(input)
	} else {
		u = newURLFrom(&t.components, href)
	}
	if r != nil {
		putRecord(r)
	}
	return u, nil
}

// ParseValue parses like Parse but returns the URL by value, like Ada's
// ada::parse, so that the URL itself is no heap object: when the href is
// the input itself, it views input and allocates nothing; otherwise it
// makes one pointer-free allocation, the href alone. Use it where URLs
// are kept in structs or slices, or dropped soon after parsing; the
// ownership rules are Parse's (input must be immutable and stays alive).
// Copies of the returned URL share its href: when one is reused with
// ParseInto, the others see its href change (use Clone to keep one).
func ParseValue(input string, base *URL) (URL, error) {
	var u URL
	if len(input) > MaxInputLen {
		return u, &Error{Op: "parse", Input: input, Err: ErrTooLong}
	}
	if _, res := u.fastPath(input, nil, fastView); res == fastSame {
		u.viewInput(input)
		return u, nil
	}
	var stack [stackHrefLen]byte
	href, same, r, err := u.parseScratch(input, base, stack[:0])
	if err != nil {
		putRecord(r)
		return URL{}, &Error{Op: "parse", Input: input, Err: err}
	}
	if same {
		u.viewInput(input)
	} else {
		// append copies without zeroing first (the allocation is
		// pointer-free) and rounds the capacity up to the size class, room
		// a later ParseInto may reuse.
		u.href = append([]byte(nil), href...)
	}
	if r != nil {
		putRecord(r)
	}
	return u, nil
}

// parseScratch parses input into t's offsets and returns the href in
// scratch storage: stack when the fast path surely fits it there, else the
// buffer of the pooled record it also returns (nil when none was taken),
// which the caller puts back after copying or viewing the href. same
// reports whether the href equals input: the fast path knows it for its
// common case (fastSame), other hrefs are compared (when their length is
// the input's). On error the record, if any, is returned too.
func (t *URL) parseScratch(input string, base *URL, stack []byte) (href []byte, same bool, r *record, err error) {
	href, res := t.fastPath(input, stack, fastFixed)
	switch res {
	case fastSame:
		return href, true, nil, nil
	case fastDone:
		return href, bytesString(href) == input, nil, nil
	}
	r = getRecord()
	if res == fastNoRoom {
		r.out, _ = t.fastPath(input, r.out[:0], fastGrow)
		return r.out, bytesString(r.out) == input, r, nil
	}
	if err := r.parse(input, base, stNone); err != nil {
		return nil, false, r, err
	}
	r.serialize(t, r.out[:0])
	r.out, t.href = t.href, nil
	return r.out, bytesString(r.out) == input, r, nil
}

// viewInput makes u's href the bytes of input, which equal the href
// Parse serialized: a read-only view (Go strings are immutable), which
// the buffer-reusing paths never write into (see hrefBuf).
func (u *URL) viewInput(input string) {
	u.href = stringBytes(input)
	u.inputHref = true
}

// hrefBuf returns u's href buffer for ParseInto to reuse: empty with its
// capacity, or nil when the href views Parse's input string, which must
// never be written.
func (u *URL) hrefBuf() []byte {
	if u.inputHref {
		return nil
	}
	return u.href[:0]
}

// stackHrefLen is the size of the stack buffer Parse and CanParse run the
// fast path in. The URLs of the benchmark corpora are mostly far shorter
// (kasztp: 45 bytes on average, none over 256; userbait: 61, 1.2% over
// 256); a larger buffer costs its zeroing on every call.
const stackHrefLen = 256

// ParseInto parses like Parse into dst, reusing dst's buffers: once they
// have grown to fit, it allocates nothing, not even on failure. Strings
// previously obtained from dst's getters change (see URL). base may be dst
// itself. On error dst is unchanged, and the returned
// *Error lives in dst: it is valid until the next ParseInto on dst (copy it
// to keep it longer).
func ParseInto(dst *URL, input string, base *URL) error {
	if err := dst.parseInto(input, base); err != nil {
		r := dst.scratch()
		r.err = Error{Op: "parse", Input: input, Err: err}
		return &r.err
	}
	return nil
}

// CanParse reports whether Parse would succeed. It allocates nothing
// (except for hosts whose IDNA processing allocates).
func CanParse(input string, base *URL) bool {
	if len(input) > MaxInputLen {
		return false
	}
	var stack [stackHrefLen]byte
	var t URL
	if _, res := t.fastPath(input, stack[:0], fastFixed); res != fastRejected {
		return true
	}
	r := getRecord()
	defer putRecord(r)
	return r.parse(input, base, stNone) == nil
}

// parseInto tries the fast path, then the full state machine, writing into
// u's own buffers.
func (u *URL) parseInto(input string, base *URL) error {
	if len(input) > MaxInputLen {
		return ErrTooLong
	}
	if u.parseFast(input) {
		return nil
	}
	return u.parseFull(input, base)
}

// parseFast runs the fast path into u's href buffer and reports whether it
// accepted input.
func (u *URL) parseFast(input string) bool {
	href, res := u.fastPath(input, u.hrefBuf(), fastGrow)
	if res.parsed() {
		u.href, u.inputHref = href, false
	}
	return res.parsed()
}

// parseFull runs the state machine and serializes the result into u's
// href buffer.
func (u *URL) parseFull(input string, base *URL) error {
	r := u.rec
	if r == nil || base == u {
		r = new(record)
		if base != u {
			u.rec = r
		}
	}
	if err := r.parse(input, base, stNone); err != nil {
		return err
	}
	r.serialize(u, u.hrefBuf())
	return nil
}

// scratch returns u's record, creating it on first use.
func (u *URL) scratch() *record {
	if u.rec == nil {
		u.rec = new(record)
	}
	return u.rec
}
