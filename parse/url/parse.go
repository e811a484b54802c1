package url

// Parse parses input, resolved against base when base is non-nil (the
// standard's "API URL parser" with the new URL(input, base) semantics).
//
// A successful Parse makes one allocation (for hrefs up to about 32 KiB,
// and except for hosts whose IDNA processing allocates): the URL and its
// href buffer, sized once for the exact href length, share one object
// (see newURL). The parse itself runs in scratch storage: a stack
// buffer for the fast path, a pooled record for the state machine. A
// failed Parse allocates the returned *Error.
func Parse(input string, base *URL) (*URL, error) {
	if len(input) > MaxInputLen {
		return nil, &Error{Op: "parse", Input: input, Err: ErrTooLong}
	}
	// The fast path writes into a stack buffer when its href surely fits
	// (fastPath checks), else into the pooled record's buffer.
	var stack [stackHrefLen]byte
	var t URL
	href, res := t.fastPath(input, stack[:0], true)
	if res == fastDone {
		return newURLFrom(&t.components, href), nil
	}
	r := getRecord()
	defer putRecord(r)
	if res == fastNoRoom {
		r.out, _ = t.fastPath(input, r.out[:0], false)
		return newURLFrom(&t.components, r.out), nil
	}
	if err := r.parse(input, base, stNone); err != nil {
		return nil, &Error{Op: "parse", Input: input, Err: err}
	}
	u := newURL(r.hrefLen())
	r.serialize(u, u.href)
	return u, nil
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
	if _, res := t.fastPath(input, stack[:0], true); res != fastRejected {
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
	href, res := u.fastPath(input, u.href[:0], false)
	if res == fastDone {
		u.href = href
	}
	return res == fastDone
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
	r.serialize(u, u.href)
	return nil
}

// scratch returns u's record, creating it on first use.
func (u *URL) scratch() *record {
	if u.rec == nil {
		u.rec = new(record)
	}
	return u.rec
}
