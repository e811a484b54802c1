package url

// The authority, host and port parts of the basic URL parser (§4.4).

// authority is the authority state. The standard appends code points to a
// buffer until '@' and percent-encodes it into username and password; the
// net effect is that everything up to the last '@' of the authority is the
// userinfo (earlier '@'s encoded as %40) split at its first ':'. It returns
// where the host starts.
func (r *record) authority(in string, p int, special bool) (int, error) {
	e := p
	at := -1
	for ; e < len(in); e++ {
		c := in[e]
		if c == '/' || c == '?' || c == '#' || (special && c == '\\') {
			break
		}
		if c == '@' {
			at = e
		}
	}
	if at < 0 {
		return p, nil
	}
	if at+1 == e {
		return 0, ErrHostMissing
	}
	userinfo := in[p:at]
	colon := len(userinfo)
	for i := 0; i < len(userinfo); i++ {
		if userinfo[i] == ':' {
			colon = i
			break
		}
	}
	r.username = appendEncoded(r.username[:0], userinfo[:colon], userinfoSet)
	r.password = r.password[:0]
	if colon < len(userinfo) {
		r.password = appendEncoded(r.password, userinfo[colon+1:], userinfoSet)
	}
	return at + 1, nil
}

// hostState is the host and hostname states: it finds the end of the host
// (a ':' outside brackets starts the port), parses and stores the host. It
// returns the index of the terminating byte and whether a port follows.
func (r *record) hostState(in string, p int, special bool, override state) (int, bool, error) {
	e := p
	insideBrackets := false
	port := false
scan:
	for ; e < len(in); e++ {
		switch c := in[e]; {
		case c == ':' && !insideBrackets:
			port = true
			break scan
		case c == '/' || c == '?' || c == '#' || (special && c == '\\'):
			break scan
		case c == '[':
			insideBrackets = true
		case c == ']':
			insideBrackets = false
		}
	}
	buf := in[p:e]
	if port {
		if buf == "" {
			return e, port, ErrHostMissing
		}
		if override == stHostname {
			return e, port, nil
		}
	} else {
		if special && buf == "" {
			return e, port, ErrHostMissing
		}
		if override != stNone && buf == "" && (r.includesCredentials() || r.port != omitted) {
			return e, port, ErrSetterRejected
		}
	}
	h, ht, err := r.hp.parseHost(r.hbuf[:0], buf, !special)
	r.hbuf = h
	if err != nil {
		return e, port, err
	}
	r.host = append(r.host[:0], h...)
	r.htype = ht
	return e, port, nil
}
