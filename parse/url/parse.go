package url

// Parse parses input, resolved against base when base is non-nil (the
// standard's "API URL parser" with the new URL(input, base) semantics).
func Parse(input string, base *URL) (*URL, error) {
	u := new(URL)
	if err := parseInto(u, input, base, false); err != nil {
		return nil, &Error{Op: "parse", Input: input, Err: err}
	}
	return u, nil
}

// ParseInto parses like Parse into dst, reusing dst's buffers: once they
// have grown to fit, it allocates nothing, not even on failure. Strings
// previously obtained from dst's getters change (see URL). base may be dst
// itself. On error dst is unchanged, and the returned
// *Error lives in dst: it is valid until the next ParseInto on dst (copy it
// to keep it longer).
func ParseInto(dst *URL, input string, base *URL) error {
	if err := parseInto(dst, input, base, true); err != nil {
		dst.err = Error{Op: "parse", Input: input, Err: err}
		return &dst.err
	}
	return nil
}

// CanParse reports whether Parse would succeed.
func CanParse(input string, base *URL) bool {
	var u URL
	return parseInto(&u, input, base, false) == nil
}

// parseInto tries the fast path, then the full state machine.
func parseInto(u *URL, input string, base *URL, reuse bool) error {
	if len(input) > MaxInputLen {
		return ErrTooLong
	}
	if ok := u.parseFast(input, reuse); ok {
		return nil
	}
	return u.parseFull(input, base, reuse)
}

// parseFull runs the state machine and serializes the result.
func (u *URL) parseFull(input string, base *URL, reuse bool) error {
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
	r.serialize(u, reuse)
	return nil
}
