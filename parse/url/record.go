package url

// record is the URL Standard's URL record (§4.1) as the full state machine
// builds it: each component in its own reusable buffer, the path already in
// serialized form ("/a/b" for a list path, the text itself for an opaque
// path). serialize turns it into a URL's href buffer and offsets.
type record struct {
	scheme   []byte
	stype    schemeType
	username []byte
	password []byte
	host     []byte // serialized host; meaningful when htype != hostNull
	htype    hostType
	port     uint32 // omitted when null
	path     []byte
	opaque   bool
	query    []byte
	hasQuery bool
	frag     []byte
	hasFrag  bool

	input []byte // the input without tabs and newlines, when it had any
	hp    hostParser
	hbuf  []byte // host parser output before it is committed
	out   []byte // Parse's fast-path output for inputs too long for its stack buffer

	// err is the error ParseInto returns, kept in the URL's record so
	// that a failed ParseInto allocates nothing.
	err Error
}

func (r *record) reset() {
	r.scheme = r.scheme[:0]
	r.stype = schemeOther
	r.username = r.username[:0]
	r.password = r.password[:0]
	r.host = r.host[:0]
	r.htype = hostNull
	r.port = omitted
	r.path = r.path[:0]
	r.opaque = false
	r.query = r.query[:0]
	r.hasQuery = false
	r.frag = r.frag[:0]
	r.hasFrag = false
}

// includesCredentials is §4.1 "includes credentials".
func (r *record) includesCredentials() bool { return len(r.username) > 0 || len(r.password) > 0 }

// shortenPath is §4.1 "shorten a URL's path" on the serialized path.
func (r *record) shortenPath() {
	if r.stype == schemeFile && pathSegments(r.path) == 1 && isNormalizedDriveLetter(bytesString(r.path[1:])) {
		return
	}
	i := len(r.path) - 1
	for i >= 0 && r.path[i] != '/' {
		i--
	}
	if i >= 0 {
		r.path = r.path[:i]
	}
}

// pathSegments counts the segments of a serialized list path.
func pathSegments(p []byte) int {
	n := 0
	for _, c := range p {
		if c == '/' {
			n++
		}
	}
	return n
}

// loadFrom copies base's components into r (the relative states' "set
// url's X to base's X").
func (r *record) copyScheme(b *URL) {
	r.scheme = append(r.scheme[:0], b.Scheme()...)
	r.stype = b.scheme
}

func (r *record) copyAuthority(b *URL) {
	r.username = append(r.username[:0], b.Username()...)
	r.password = append(r.password[:0], b.Password()...)
	r.copyHost(b)
	r.port = b.port
}

func (r *record) copyHost(b *URL) {
	r.host = append(r.host[:0], b.Hostname()...)
	r.htype = b.host
}

func (r *record) copyPath(b *URL) {
	r.path = append(r.path[:0], b.Pathname()...)
	r.opaque = b.opaquePath
}

func (r *record) copyQuery(b *URL) {
	q, ok := b.Query()
	r.query = append(r.query[:0], q...)
	r.hasQuery = ok
}

// loadURL fills r with u's components (for the setters).
func (r *record) loadURL(u *URL) {
	r.reset()
	r.copyScheme(u)
	r.copyAuthority(u)
	r.copyPath(u)
	r.copyQuery(u)
	f, ok := u.Fragment()
	r.frag = append(r.frag[:0], f...)
	r.hasFrag = ok
}

// Windows drive letters, §4.1.

func isDriveLetter(s string) bool {
	return len(s) == 2 && isASCIIAlpha(s[0]) && (s[1] == ':' || s[1] == '|')
}

func isNormalizedDriveLetter(s string) bool {
	return len(s) == 2 && isASCIIAlpha(s[0]) && s[1] == ':'
}

// startsWithDriveLetter is "starts with a Windows drive letter".
func startsWithDriveLetter(s string) bool {
	if len(s) < 2 || !isDriveLetter(s[:2]) {
		return false
	}
	if len(s) == 2 {
		return true
	}
	switch s[2] {
	case '/', '\\', '?', '#':
		return true
	}
	return false
}

func isASCIIAlpha(c byte) bool { return (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isASCIIDigit(c byte) bool { return c >= '0' && c <= '9' }

// isSingleDot and isDoubleDot are §4.1 "single-dot URL path segment" and
// "double-dot URL path segment" (with %2e in any case).
func isSingleDot(s string) bool {
	return s == "." || (len(s) == 3 && s[0] == '%' && s[1] == '2' && (s[2]|0x20) == 'e')
}

func isDoubleDot(s string) bool {
	switch len(s) {
	case 2:
		return s == ".."
	case 4:
		return (s[0] == '.' && isSingleDot(s[1:])) || (isSingleDot(s[:3]) && s[3] == '.')
	case 6:
		return isSingleDot(s[:3]) && isSingleDot(s[3:])
	}
	return false
}
