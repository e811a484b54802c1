package url

// pathSegment is one round of the path state (§4.4): it takes the bytes up
// to the next segment delimiter as the buffer, applies the dot-segment and
// drive-letter rules, appends the segment to the serialized path, and
// returns the delimiter's index and the delimiter (or eof).
func (r *record) pathSegment(in string, p int, special bool, override state) (int, int) {
	e := p
	for ; e < len(in); e++ {
		c := in[e]
		if c == '/' || (special && c == '\\') || (override == stNone && (c == '?' || c == '#')) {
			break
		}
	}
	c := eof
	if e < len(in) {
		c = int(in[e])
	}
	seg := in[p:e]
	slash := c == '/' || (special && c == '\\')
	switch {
	case isDoubleDot(seg):
		r.shortenPath()
		if !slash {
			r.path = append(r.path, '/')
		}
	case isSingleDot(seg):
		if !slash {
			r.path = append(r.path, '/')
		}
	case r.stype == schemeFile && len(r.path) == 0 && isDriveLetter(seg):
		r.path = append(r.path, '/', seg[0], ':')
	default:
		r.path = appendEncoded(append(r.path, '/'), seg, pathSet)
	}
	return e, c
}
