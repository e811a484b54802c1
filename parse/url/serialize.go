package url

// serialize writes r into u's href buffer and offsets: the URL serializer
// of §4.5, recording where each component lands.
func (r *record) serialize(u *URL, reuse bool) {
	b := u.href[:0]
	if !reuse {
		b = nil
	}
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
	u.href = b
}
