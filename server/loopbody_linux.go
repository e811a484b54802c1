//go:build linux

package server

// The event loop's side of the body's minimum rate (bodyrate.go): a small
// Content-Length body the loop waits for on the loop is bounded by the
// same rule as a body read on a goroutine, with the connection's read
// deadline as the only timer, checked by the loop's scan.

// loopBodyWait is a connection's wait for the body of its current request.
type loopBodyWait struct {
	// since is the loop-clock time of the first wait (0: not waiting;
	// serveBuffered clears it once the body is complete).
	since int64
	// base is how many body bytes had arrived then: the rate counts the
	// bytes received while waiting, as the goroutine engine does.
	base int64
}

// bodyDeadline returns the read deadline of a connection waiting for its
// body, of which got bytes are buffered: the Idle deadline, or the rate
// deadline if that comes first.
func (lp *loop) bodyDeadline(lc *lconn, got, now int64) int64 {
	t := lc.c.timeouts()
	var dl int64
	if t.Idle > 0 {
		dl = now + int64(t.Idle)
	}
	if t.BodyMinRate <= 0 {
		return dl
	}
	w := &lc.body
	if w.since == 0 {
		w.since, w.base = max(now, 1), got
	}
	if rdl := w.since + int64(rateAllowance(got-w.base, t)); dl == 0 || rdl < dl {
		dl = rdl
	}
	return dl
}

// bodyTimedOut answers 408 to a connection whose body stopped arriving
// (Idle or the minimum rate) and closes it once the answer is out; the
// goroutine engine's handlers answer the same through StatusFor.
func (lp *loop) bodyTimedOut(lc *lconn, now int64) {
	lc.c.writeError(408)
	lc.closeAfter = true
	lc.rdl, lc.body = 0, loopBodyWait{}
	lp.writeSoon(lc, now)
}
