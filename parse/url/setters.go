package url

import "strings"

// Setters, URL Standard §6.1 (the URL class's attribute setters). Each one
// leaves the URL exactly as the standard's setter would: invalid values are
// ignored, partly valid values apply the valid part (a host setter value
// "h:12x" sets host h and port 12). The returned error says why a value was
// not (fully) applied; the URL is valid either way.
//
// A setter builds a new href buffer, so strings previously returned by the
// getters stay valid.

// edit loads u into a scratch record, lets fn change it and run the parser
// with a state override, and writes the record back. Setters are not a hot
// path: they use a fresh record and buffer each time.
func (u *URL) edit(op, value string, fn func(r *record) error) error {
	var r record
	r.loadURL(u)
	err := fn(&r)
	r.serialize(u, make([]byte, 0, r.hrefLen()))
	if err != nil {
		return &Error{Op: op, Input: value, Err: err}
	}
	return nil
}

// cannotHaveCredentialsOrPort is §4.1 "cannot have a
// username/password/port": the host is null or empty, or the scheme is file.
func (u *URL) cannotHaveCredentialsOrPort() bool {
	return u.host == hostNull || u.hostStart == u.hostEnd || u.scheme == schemeFile
}

// SetHref parses v and, on success, replaces u with the result; on failure
// u is unchanged and the error is returned (the standard throws).
func (u *URL) SetHref(v string) error {
	n, err := Parse(v, nil)
	if err != nil {
		return &Error{Op: "set_href", Input: v, Err: err.(*Error).Err}
	}
	rec := u.rec
	*u = *n
	u.rec = rec
	if u.inputHref {
		// Parse viewed v; a setter builds a buffer of its own (v may be
		// another URL's getter string, which changes with that URL).
		u.href, u.inputHref = append([]byte(nil), u.href...), false
	}
	return nil
}

// SetProtocol sets the scheme from v (up to an optional ':'); switching
// between special and non-special schemes, or to file with credentials or a
// port, is refused as the standard says.
func (u *URL) SetProtocol(v string) error {
	return u.edit("set_protocol", v, func(r *record) error {
		return r.parse(v+":", nil, stSchemeStart)
	})
}

// SetUsername sets the username, percent-encoding v with the userinfo set.
func (u *URL) SetUsername(v string) error {
	if u.cannotHaveCredentialsOrPort() {
		return &Error{Op: "set_username", Input: v, Err: ErrSetterRejected}
	}
	return u.edit("set_username", v, func(r *record) error {
		r.username = appendEncoded(r.username[:0], v, userinfoSet)
		return nil
	})
}

// SetPassword sets the password, percent-encoding v with the userinfo set.
func (u *URL) SetPassword(v string) error {
	if u.cannotHaveCredentialsOrPort() {
		return &Error{Op: "set_password", Input: v, Err: ErrSetterRejected}
	}
	return u.edit("set_password", v, func(r *record) error {
		r.password = appendEncoded(r.password[:0], v, userinfoSet)
		return nil
	})
}

// SetHost sets host and optionally port from v ("host[:port]").
func (u *URL) SetHost(v string) error {
	if u.opaquePath {
		return &Error{Op: "set_host", Input: v, Err: ErrSetterRejected}
	}
	return u.edit("set_host", v, func(r *record) error { return r.parse(v, nil, stHost) })
}

// SetHostname sets the host from v, ignoring it when it contains a port.
func (u *URL) SetHostname(v string) error {
	if u.opaquePath {
		return &Error{Op: "set_hostname", Input: v, Err: ErrSetterRejected}
	}
	return u.edit("set_hostname", v, func(r *record) error { return r.parse(v, nil, stHostname) })
}

// SetPort sets the port from the leading digits of v; "" removes it.
func (u *URL) SetPort(v string) error {
	if u.cannotHaveCredentialsOrPort() {
		return &Error{Op: "set_port", Input: v, Err: ErrSetterRejected}
	}
	return u.edit("set_port", v, func(r *record) error {
		if v == "" {
			r.port = omitted
			return nil
		}
		return r.parse(v, nil, stPort)
	})
}

// SetPathname replaces the path (not for URLs with an opaque path).
func (u *URL) SetPathname(v string) error {
	if u.opaquePath {
		return &Error{Op: "set_pathname", Input: v, Err: ErrSetterRejected}
	}
	return u.edit("set_pathname", v, func(r *record) error {
		r.path = r.path[:0]
		return r.parse(v, nil, stPathStart)
	})
}

// SetSearch sets the query from v (without a leading '?'); "" removes it.
func (u *URL) SetSearch(v string) error {
	return u.edit("set_search", v, func(r *record) error {
		if v == "" {
			r.query, r.hasQuery = r.query[:0], false
			return nil
		}
		r.query, r.hasQuery = r.query[:0], true
		return r.parse(strings.TrimPrefix(v, "?"), nil, stQuery)
	})
}

// SetHash sets the fragment from v (without a leading '#'); "" removes it.
func (u *URL) SetHash(v string) error {
	return u.edit("set_hash", v, func(r *record) error {
		if v == "" {
			r.frag, r.hasFrag = r.frag[:0], false
			return nil
		}
		r.frag, r.hasFrag = r.frag[:0], true
		return r.parse(strings.TrimPrefix(v, "#"), nil, stFragment)
	})
}
