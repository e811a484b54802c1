package url

// serialize writes r into buf[:0] (grown as needed) and sets u's href and
// offsets: the URL serializer of §4.5, recording where each component
// lands. A buf with capacity hrefLen() is never grown.
func (r *record) serialize(u *URL, buf []byte) {
	b := buf[:0]
	b = append(b, r.scheme...)
	u.schemeEnd = uint32(len(b))
	b = append(b, ':')
	u.scheme = r.stype
	u.host = r.htype
	u.port = r.port
	u.opaquePath = r.opaque
	if r.htype != hostNull {
		b = append(b, '/', '/')
		u.userStart = uint32(len(b))
		b = append(b, r.username...)
		u.userEnd = uint32(len(b))
		u.passStart, u.passEnd = u.userEnd, u.userEnd
		if len(r.password) > 0 {
			b = append(b, ':')
			u.passStart = uint32(len(b))
			b = append(b, r.password...)
			u.passEnd = uint32(len(b))
		}
		if r.includesCredentials() {
			b = append(b, '@')
		}
		u.hostStart = uint32(len(b))
		b = append(b, r.host...)
		u.hostEnd = uint32(len(b))
		if r.port != omitted {
			b = append(b, ':')
			b = appendPort(b, r.port)
		}
	} else {
		at := uint32(len(b))
		u.userStart, u.userEnd, u.passStart, u.passEnd, u.hostStart, u.hostEnd = at, at, at, at, at, at
		// §4.5 step 3: keep "//" at the start of a path from being read
		// back as an authority.
		if !r.opaque && len(r.path) > 1 && r.path[0] == '/' && r.path[1] == '/' {
			b = append(b, '/', '.')
		}
	}
	u.pathStart = uint32(len(b))
	b = append(b, r.path...)
	u.queryStart, u.fragStart = omitted, omitted
	if r.hasQuery {
		u.queryStart = uint32(len(b))
		b = append(append(b, '?'), r.query...)
	}
	if r.hasFrag {
		u.fragStart = uint32(len(b))
		b = append(append(b, '#'), r.frag...)
	}
	u.href, u.inputHref = b, false
}

// hrefLen is the length of the href serialize writes, so that Parse can
// size the URL's buffer once.
func (r *record) hrefLen() int {
	n := len(r.scheme) + len(":")
	if r.htype != hostNull {
		n += len("//") + len(r.username) + len(r.host)
		if len(r.password) > 0 {
			n += len(":") + len(r.password)
		}
		if r.includesCredentials() {
			n += len("@")
		}
		if r.port != omitted {
			n += len(":") + decimalLen(r.port)
		}
	} else if !r.opaque && len(r.path) > 1 && r.path[0] == '/' && r.path[1] == '/' {
		n += len("/.")
	}
	n += len(r.path)
	if r.hasQuery {
		n += len("?") + len(r.query)
	}
	if r.hasFrag {
		n += len("#") + len(r.frag)
	}
	return n
}

// decimalLen is the number of decimal digits of p.
func decimalLen(p uint32) int {
	n := 1
	for p >= 10 {
		p /= 10
		n++
	}
	return n
}
