package url

// parseFast is the fast path; it reports false when the input needs the
// full state machine.
func (u *URL) parseFast(input string, reuse bool) bool { return false }
