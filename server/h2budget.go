package server

import (
	"time"

	"golang.org/x/net/http2"
)

// The idle-frame budget (HTTP2Limits.MaxIdleFrames; issue 27, item 3).
// Frames that make no progress cost the server a read and a dispatch each
// and the client nine bytes: empty DATA, empty CONTINUATION and
// WINDOW_UPDATEs of +1 kept one connection busy at 8 M frames a second.
// No single frame is wrong (RFC 9113 allows them all), so the bound is on
// their number against the work they come with, as nghttp2's glitch
// counter and Envoy's empty-frame and WINDOW_UPDATE limits do:
//
//   - each such frame spends a token; the connection starts with
//     MaxIdleFrames and can never hold more;
//   - useful work earns tokens: h2IdlePerStream for every stream opened
//     (a request), one per h2IdleRefillBytes of DATA payload received or
//     sent (a client's WINDOW_UPDATEs and BDP PINGs follow what it
//     downloads), and MaxIdleFrames/h2IdleRateDiv a second of
//     connection time (keep-alive PINGs of an idle connection);
//   - with no token left the connection ends with GOAWAY
//     ENHANCE_YOUR_CALM.
//
// An attacker thus gets at most the budget, plus ten frames a second (at
// the default), plus a few per request or KiB that it pays for in full.
// The tokens are counted lazily: a frame costs a decrement; the earnings
// are added up from counters the connection keeps anyway only when the
// budget runs dry, so no frame costs a clock read.
//
// RST_STREAM is bounded by MaxResets, header blocks by MaxHeaderListSize
// and MaxContinuations; SETTINGS and PING answers by the Write timeout,
// and their count by this budget.
type h2budget struct {
	// left is what may still be spent before the earnings are counted.
	left int
	// at, bytes and streams are the clock and the counters when the
	// earnings were last counted.
	at      time.Time
	bytes   int64
	streams int64
}

const (
	// h2IdlePerStream: a page's requests come with a PRIORITY or
	// WINDOW_UPDATE or two each (Envoy allows 100 PRIORITY frames per
	// stream; none of the browsers sends more than a few).
	h2IdlePerStream = 10
	// h2IdleRefillBytes: clients acknowledge received data in steps of
	// 4 KiB or more (Go), half a window (nghttp2, Chrome, Firefox,
	// OkHttp): a token a KiB pays for a stream and a connection
	// WINDOW_UPDATE at every step with room to spare.
	h2IdleRefillBytes = 1 << 10
	// h2IdleRateDiv: the budget refills in 100 s of connection time.
	h2IdleRateDiv = 100
)

// startBudget fills the budget at the start of the connection.
func (hc *h2conn) startBudget(now time.Time) {
	hc.idle = h2budget{left: hc.lim.MaxIdleFrames, at: now}
}

// idleFrame spends a token for a frame that made no progress; on the
// reader, which may hold mu (locked says so).
func (hc *h2conn) idleFrame(locked bool) error {
	hc.idle.left--
	if hc.idle.left >= 0 {
		return nil
	}
	if !locked {
		hc.mu.Lock()
		defer hc.mu.Unlock()
	}
	return hc.refillIdle(time.Now())
}

// refillIdle adds what the connection earned since the last count to a
// spent budget, and ends the connection if that is not enough; under mu
// (the sent bytes are counted by the handlers' writes).
func (hc *h2conn) refillIdle(now time.Time) error {
	b := &hc.idle
	full := int64(hc.lim.MaxIdleFrames)
	bytes := hc.recvData + hc.sentData
	earned := (bytes - b.bytes) / h2IdleRefillBytes
	earned += (hc.opened - b.streams) * h2IdlePerStream
	// Time is counted in whole tokens, and only the time they account
	// for is consumed, so that frequent counts lose nothing.
	per := max(time.Second*h2IdleRateDiv/time.Duration(full), 1)
	ticks := int64(now.Sub(b.at) / per)
	earned += ticks
	b.at = b.at.Add(time.Duration(ticks) * per)
	b.bytes += (bytes - b.bytes) / h2IdleRefillBytes * h2IdleRefillBytes
	b.streams = hc.opened
	b.left = int(min(int64(b.left)+earned, full))
	if b.left < 0 {
		return h2ConnError(http2.ErrCodeEnhanceYourCalm)
	}
	return nil
}
