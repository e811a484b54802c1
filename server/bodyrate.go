package server

import "time"

// The body's minimum rate (Timeouts.BodyMinRate, BodyRateWindow; issue 18,
// item 3). Idle bounds each read of a body, so a client that sends one
// byte every few seconds keeps a request, and on proxy routes an upstream
// connection, for as long as it likes. The body as a whole is bounded
// instead, as Apache's mod_reqtimeout does with "body=...,MinRate=...":
// from the first wait for body bytes, the body may take the window plus
// one second per BodyMinRate bytes received. A trickle earns a second per
// BodyMinRate bytes whatever its pattern, so it cannot outlast the window
// by more than its bytes pay for.
//
// Defaults: 1 KiB/s after 10 s. The slowest links still in use (GPRS,
// satellite under load) carry several KiB/s, so no real upload is cut;
// the window matches ReadHeader and covers a connection's slow start and
// a client that pauses before its body. Holding a connection an hour
// costs a trickler 3.6 MB sent, where it cost nothing before.
//
// Cost: the goroutine engine already reads the clock before each body
// read (for the Idle deadline); the rate deadline is computed from that
// reading, and the read deadline is set exactly only while the rate
// deadline is the nearer one (the first wait of a body, and bodies that
// arrive near the minimum rate). The event loop keeps it as the
// connection's read deadline, checked by the scan it already runs.

// bodyRate is one body's account against the minimum rate.
type bodyRate struct {
	// start is when the server first waited for the body's bytes
	// (goroutine engine; the loop keeps its own clock in lconn).
	start time.Time
	// got counts the stream bytes received since start.
	got int64
}

// maxRateSeconds caps the credit a body earns, so the arithmetic cannot
// overflow a Duration (292 years); a cap of 100 years changes nothing.
const maxRateSeconds = 100 * 365 * 24 * 3600

// rateAllowance is how long after the first wait a body that has
// delivered got bytes may take to deliver more: window + got/rate.
func rateAllowance(got int64, t *Timeouts) time.Duration {
	sec := got / t.BodyMinRate
	if sec >= maxRateSeconds {
		return maxRateSeconds * time.Second
	}
	frac := got % t.BodyMinRate * int64(time.Second) / t.BodyMinRate
	return t.BodyRateWindow + time.Duration(sec)*time.Second + time.Duration(frac)
}

// normalizeBodyRate applies the defaults; the check is off (BodyMinRate
// 0) when either value is negative.
func (t *Timeouts) normalizeBodyRate() {
	if t.BodyMinRate < 0 || t.BodyRateWindow < 0 {
		t.BodyMinRate, t.BodyRateWindow = 0, 0
		return
	}
	if t.BodyMinRate == 0 {
		t.BodyMinRate = DefaultBodyMinRate
	}
	if t.BodyRateWindow == 0 {
		t.BodyRateWindow = DefaultBodyRateWindow
	}
}

// timeouts are the timeouts the connection is served under; the body
// rate reads them only through here, on both engines.
func (c *conn) timeouts() *Timeouts { return &c.cfg.Timeouts }

// setBodyReadDeadline sets the read deadline of a body read starting at
// now: the Idle deadline (lazily, as setReadDeadline does), or the rate
// deadline when that comes first (exactly: it must not cut a body that
// keeps the rate).
func (c *conn) setBodyReadDeadline(now time.Time) {
	t := c.timeouts()
	if t.BodyMinRate <= 0 {
		c.setReadDeadline(now, t.Idle)
		return
	}
	r := &c.req.body.rate
	if r.start.IsZero() {
		r.start = now
	}
	dl := r.start.Add(rateAllowance(r.got, t))
	if t.Idle > 0 && !dl.Before(now.Add(t.Idle)) {
		c.setReadDeadline(now, t.Idle)
		return
	}
	c.setExactReadDeadline(dl)
}

// streamRate is the account of a stream's body (HTTP/2, HTTP/3), whose
// protocol counts the bytes received: at is when the handler first
// waited for body bytes, base what the count was then.
type streamRate struct {
	at   time.Time
	base int64
}

// wait is how long a body read starting at now may wait, got bytes of the
// body received so far: Idle, or less if the body's minimum rate runs out
// sooner. The rate counts from the first wait, whether or not the handler
// reads meanwhile, as on HTTP/1.1, until the response begins (committed).
func (r *streamRate) wait(t *Timeouts, now time.Time, got int64, committed bool) time.Duration {
	d := t.Idle
	// Once the response has begun the stream is a conversation (a gRPC
	// bidi call, a server-streaming answer), not a server waiting on a
	// slow upload: the rate would cut every such stream whose client
	// talks less than BodyMinRate, so only Idle bounds its reads.
	if t.BodyMinRate <= 0 || committed {
		return d
	}
	if r.at.IsZero() {
		r.at, r.base = now, got
	}
	left := r.at.Add(rateAllowance(got-r.base, t)).Sub(now)
	if d <= 0 || left < d {
		// At least a nanosecond: zero reads as no bound.
		d = max(left, 1)
	}
	return d
}
