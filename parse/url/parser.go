package url

import "github.com/simdedge/simdedge/asm"

// The basic URL parser, URL Standard §4.4. Each state is named as in the
// standard; the comment on each case links its section. The machine works
// on bytes: every byte >= 0x80 is in every percent-encode set and in no
// delimiter set, so walking UTF-8 bytes gives the same result as walking
// code points. (Invalid UTF-8 is percent-encoded byte by byte rather than
// replaced by U+FFFD.)
//
// Where the standard appends one code point at a time to a buffer, the
// machine scans ahead to the end of the component and handles the run at
// once; the cases say where.
type state uint8

const (
	stSchemeStart                   state = iota // https://url.spec.whatwg.org/#scheme-start-state
	stScheme                                     // #scheme-state
	stNoScheme                                   // #no-scheme-state
	stSpecialRelativeOrAuthority                 // #special-relative-or-authority-state
	stPathOrAuthority                            // #path-or-authority-state
	stRelative                                   // #relative-state
	stRelativeSlash                              // #relative-slash-state
	stSpecialAuthoritySlashes                    // #special-authority-slashes-state
	stSpecialAuthorityIgnoreSlashes              // #special-authority-ignore-slashes-state
	stAuthority                                  // #authority-state
	stHost                                       // #host-state
	stHostname                                   // #hostname-state
	stPort                                       // #port-state
	stFile                                       // #file-state
	stFileSlash                                  // #file-slash-state
	stFileHost                                   // #file-host-state
	stPathStart                                  // #path-start-state
	stPath                                       // #path-state
	stOpaquePath                                 // #cannot-be-a-base-url-path-state
	stQuery                                      // #query-state
	stFragment                                   // #fragment-state
	stNone                                       // no state override
)

// eof stands for the standard's EOF code point.
const eof = -1

// isC0OrSpace is "C0 control or space", stripped from both ends of input.
func isC0OrSpace(c byte) bool { return c <= ' ' }

// trimC0Space strips leading and trailing C0 controls and spaces (§4.4
// basic URL parser, step 1.2).
func trimC0Space(s string) string {
	i, j := 0, len(s)
	for i < j && isC0OrSpace(s[i]) {
		i++
	}
	for j > i && isC0OrSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// removeTabNewline removes ASCII tab and newline (step 2) into r.input
// when there are any; the common case of none is one SIMD scan.
func (r *record) removeTabNewline(s string) string {
	i := asm.IndexTabNewlineString(s)
	if i < 0 {
		return s
	}
	buf := append(r.input[:0], s[:i]...)
	for ; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\n' && c != '\r' {
			buf = append(buf, c)
		}
	}
	r.input = buf
	return bytesString(buf)
}

// parse runs the basic URL parser on in with optional base, into r. With
// override != stNone it is a setter run (r already holds the URL). A nil
// error with a setter means "return" (done, possibly unchanged).
func (r *record) parse(in string, base *URL, override state) error {
	if override == stNone {
		r.reset()
		in = trimC0Space(in)
	}
	in = r.removeTabNewline(in)
	st := override
	if st == stNone {
		st = stSchemeStart
	}
	special := r.stype != schemeOther
	p := 0
	for ; ; p++ {
		c := eof
		if p < len(in) {
			c = int(in[p])
		}
		switch st {
		case stSchemeStart: // §4.4 scheme start state
			if c != eof && isASCIIAlpha(byte(c)) {
				st = stScheme
				p--
			} else if override == stNone {
				st = stNoScheme
				p--
			} else {
				return ErrInvalidScheme
			}

		case stScheme: // §4.4 scheme state: the scheme run is scanned at once.
			e := p
			for e < len(in) && isSchemeByte(in[e]) {
				e++
			}
			if e < len(in) && in[e] == ':' {
				scheme := in[p:e]
				newType := schemeOfFold(scheme)
				if override != stNone {
					if (r.stype != schemeOther) != (newType != schemeOther) {
						return nil
					}
					if (r.includesCredentials() || r.port != omitted) && newType == schemeFile {
						return nil
					}
					if r.stype == schemeFile && r.htype != hostNull && len(r.host) == 0 {
						return nil
					}
				}
				r.scheme = append(r.scheme[:0], scheme...)
				asm.ToLowerInPlace(r.scheme)
				r.stype = newType
				special = newType != schemeOther
				if override != stNone {
					if r.port == defaultPorts[r.stype] {
						r.port = omitted
					}
					return nil
				}
				p = e
				rest := in[e+1:]
				switch {
				case r.stype == schemeFile:
					st = stFile
				case special && base != nil && base.scheme == r.stype:
					st = stSpecialRelativeOrAuthority
				case special:
					st = stSpecialAuthoritySlashes
				case len(rest) > 0 && rest[0] == '/':
					st = stPathOrAuthority
					p++
				default:
					r.path = r.path[:0]
					r.opaque = true
					st = stOpaquePath
				}
			} else if override == stNone {
				st = stNoScheme
				p = -1
			} else {
				return ErrInvalidScheme
			}

		case stNoScheme: // §4.4 no scheme state
			if base == nil || (base.opaquePath && c != '#') {
				return ErrMissingScheme
			} else if base.opaquePath && c == '#' {
				r.copyScheme(base)
				special = r.stype != schemeOther
				r.copyPath(base)
				r.copyQuery(base)
				r.frag = r.frag[:0]
				r.hasFrag = true
				st = stFragment
			} else if base.scheme != schemeFile {
				st = stRelative
				p--
			} else {
				st = stFile
				p--
			}

		case stSpecialRelativeOrAuthority: // §4.4 special relative or authority state
			if c == '/' && p+1 < len(in) && in[p+1] == '/' {
				st = stSpecialAuthorityIgnoreSlashes
				p++
			} else {
				st = stRelative
				p--
			}

		case stPathOrAuthority: // §4.4 path or authority state
			if c == '/' {
				st = stAuthority
			} else {
				st = stPath
				p--
			}

		case stRelative: // §4.4 relative state
			r.copyScheme(base)
			special = r.stype != schemeOther
			if c == '/' || (special && c == '\\') {
				st = stRelativeSlash
			} else {
				r.copyAuthority(base)
				r.copyPath(base)
				r.copyQuery(base)
				switch {
				case c == '?':
					r.query = r.query[:0]
					r.hasQuery = true
					st = stQuery
				case c == '#':
					r.frag = r.frag[:0]
					r.hasFrag = true
					st = stFragment
				case c != eof:
					r.query = r.query[:0]
					r.hasQuery = false
					r.shortenPath()
					st = stPath
					p--
				}
			}

		case stRelativeSlash: // §4.4 relative slash state
			if special && (c == '/' || c == '\\') {
				st = stSpecialAuthorityIgnoreSlashes
			} else if c == '/' {
				st = stAuthority
			} else {
				r.copyAuthority(base)
				st = stPath
				p--
			}

		case stSpecialAuthoritySlashes: // §4.4 special authority slashes state
			st = stSpecialAuthorityIgnoreSlashes
			if c == '/' && p+1 < len(in) && in[p+1] == '/' {
				p++
			} else {
				p--
			}

		case stSpecialAuthorityIgnoreSlashes: // §4.4 special authority ignore slashes state
			if c != '/' && c != '\\' {
				st = stAuthority
				p--
			}

		case stAuthority: // §4.4 authority state
			var err error
			if p, err = r.authority(in, p, special); err != nil {
				return err
			}
			st = stHost
			p--

		case stHost, stHostname: // §4.4 host state, hostname state
			if override != stNone && r.stype == schemeFile {
				st = stFileHost
				p--
				continue
			}
			e, port, err := r.hostState(in, p, special, override)
			if err != nil || (override == stHostname && port) {
				return err
			}
			p = e
			if port {
				st = stPort
				continue
			}
			if override != stNone {
				return nil
			}
			st = stPathStart
			p--

		case stPort: // §4.4 port state
			e := p
			for e < len(in) && isASCIIDigit(in[e]) {
				e++
			}
			c = eof
			if e < len(in) {
				c = int(in[e])
			}
			if c == eof || c == '/' || c == '?' || c == '#' || (special && c == '\\') || override != stNone {
				if e > p {
					port, ok := parsePort(in[p:e])
					if !ok {
						return ErrInvalidPort
					}
					if port == defaultPorts[r.stype] {
						r.port = omitted
					} else {
						r.port = port
					}
					if override != stNone {
						return nil
					}
				}
				if override != stNone {
					return ErrInvalidPort
				}
				st = stPathStart
				p = e - 1
			} else {
				return ErrInvalidPort
			}

		case stFile: // §4.4 file state
			r.scheme = append(r.scheme[:0], "file"...)
			r.stype = schemeFile
			special = true
			r.host = r.host[:0]
			r.htype = hostDomain
			if c == '/' || c == '\\' {
				st = stFileSlash
			} else if base != nil && base.scheme == schemeFile {
				r.copyHost(base)
				r.copyPath(base)
				r.copyQuery(base)
				switch {
				case c == '?':
					r.query = r.query[:0]
					r.hasQuery = true
					st = stQuery
				case c == '#':
					r.frag = r.frag[:0]
					r.hasFrag = true
					st = stFragment
				case c != eof:
					r.query = r.query[:0]
					r.hasQuery = false
					if !startsWithDriveLetter(in[p:]) {
						r.shortenPath()
					} else {
						r.path = r.path[:0]
					}
					st = stPath
					p--
				}
			} else {
				st = stPath
				p--
			}

		case stFileSlash: // §4.4 file slash state
			if c == '/' || c == '\\' {
				st = stFileHost
			} else {
				if base != nil && base.scheme == schemeFile {
					r.copyHost(base)
					if !startsWithDriveLetter(in[p:]) {
						bp := base.Pathname()
						if !base.opaquePath && len(bp) >= 3 && bp[0] == '/' {
							first := bp[1:]
							for i := 0; i < len(first); i++ {
								if first[i] == '/' {
									first = first[:i]
									break
								}
							}
							if isNormalizedDriveLetter(first) {
								r.path = append(append(r.path, '/'), first...)
							}
						}
					}
				}
				st = stPath
				p--
			}

		case stFileHost: // §4.4 file host state
			e := p
			for e < len(in) && !isFileHostEnd(in[e]) {
				e++
			}
			buf := in[p:e]
			if override == stNone && isDriveLetter(buf) {
				// The Windows drive letter quirk: the buffer is not
				// reset but parsed again by the path state.
				st = stPath
				p--
			} else if buf == "" {
				r.host = r.host[:0]
				r.htype = hostDomain
				if override != stNone {
					return nil
				}
				st = stPathStart
				p = e - 1
			} else {
				h, ht, err := r.hp.parseHost(r.hbuf[:0], buf, !special)
				r.hbuf = h
				if err != nil {
					return err
				}
				if string(h) == "localhost" {
					h = h[:0]
				}
				r.host = append(r.host[:0], h...)
				r.htype = ht
				if override != stNone {
					return nil
				}
				st = stPathStart
				p = e - 1
			}

		case stPathStart: // §4.4 path start state
			if special {
				st = stPath
				if c != '/' && c != '\\' {
					p--
				}
			} else if override == stNone && c == '?' {
				r.query = r.query[:0]
				r.hasQuery = true
				st = stQuery
			} else if override == stNone && c == '#' {
				r.frag = r.frag[:0]
				r.hasFrag = true
				st = stFragment
			} else if c != eof {
				st = stPath
				if c != '/' {
					p--
				}
			} else if override != stNone && r.htype == hostNull {
				r.path = append(r.path, '/')
			}

		case stPath: // §4.4 path state: one segment per iteration.
			e, next := r.pathSegment(in, p, special, override)
			p = e
			switch next {
			case '?':
				r.query = r.query[:0]
				r.hasQuery = true
				st = stQuery
			case '#':
				r.frag = r.frag[:0]
				r.hasFrag = true
				st = stFragment
			case eof:
				return nil
			}

		case stOpaquePath: // §4.4 opaque path state: the whole run at once.
			e := p
			for e < len(in) && in[e] != '?' && in[e] != '#' {
				e++
			}
			seg := in[p:e]
			// A space right before '?' or '#' becomes %20 so that the
			// path does not end in a space that serializing would lose.
			trailingSpace := e < len(in) && len(seg) > 0 && seg[len(seg)-1] == ' '
			if trailingSpace {
				seg = seg[:len(seg)-1]
			}
			r.path = appendEncoded(r.path, seg, c0ControlSet)
			if trailingSpace {
				r.path = append(r.path, "%20"...)
			}
			if e == len(in) {
				return nil
			}
			p = e
			if in[e] == '?' {
				r.query = r.query[:0]
				r.hasQuery = true
				st = stQuery
			} else {
				r.frag = r.frag[:0]
				r.hasFrag = true
				st = stFragment
			}

		case stQuery: // §4.4 query state: up to '#' (or the end, for a setter).
			e := p
			if override == stNone {
				for e < len(in) && in[e] != '#' {
					e++
				}
			} else {
				e = len(in)
			}
			set := querySet
			if special {
				set = specialQuerySet
			}
			r.query = appendEncoded(r.query, in[p:e], set)
			if e == len(in) {
				return nil
			}
			r.frag = r.frag[:0]
			r.hasFrag = true
			st = stFragment
			p = e

		case stFragment: // §4.4 fragment state
			r.frag = appendEncoded(r.frag, in[p:], fragmentSet)
			return nil
		}
		if c == eof && p >= len(in) {
			return nil
		}
	}
}

func isSchemeByte(c byte) bool {
	return isASCIIAlpha(c) || isASCIIDigit(c) || c == '+' || c == '-' || c == '.'
}

func isFileHostEnd(c byte) bool {
	return c == '/' || c == '\\' || c == '?' || c == '#'
}

// parsePort parses a run of ASCII digits; ok is false above 65535.
func parsePort(s string) (uint32, bool) {
	const maxPort = 1<<16 - 1
	var n uint32
	for i := 0; i < len(s); i++ {
		n = n*10 + uint32(s[i]-'0')
		if n > maxPort {
			return 0, false
		}
	}
	return n, true
}
