//go:build linux

package server

import (
	"errors"
	"io"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
	"github.com/simdedge/simdedge/server/upstream"
)

// The attempts of an exchange on the loop's own proxy (loopproxy_linux.go):
// the loop asks the attempt driver (upstream.Attempt) for a target and
// does what it says after a failure (resend on a new connection, fail over,
// retry after a backoff on the loop's clock, or answer).

// upSelect selects the target of the exchange's next attempt (the
// driver's Next) and starts it.
func (lp *loop) upSelect(lc *lconn, now int64) {
	ex := lc.ex
	switch ex.a.Next(time.Duration(now)) {
	case upstream.StepWait:
		// Every target at its cap: wait for a slot (Notify wakes
		// the loop) until queue.timeout.
		ex.queued = true
		if ex.queueDL == 0 {
			ex.queueDL = now + int64(ex.to.Queue)
		}
		ex.dl = ex.queueDL
		lp.noteDeadline(ex.dl)
		return
	case upstream.StepAnswer:
		lp.exAnswer(lc, now)
		return
	}
	t := ex.a.Target()
	lc.c.req.SetUpstream(ex.a.Pool().Name(), t.Address())
	ex.stale = false
	ex.tryDL = now + int64(ex.a.Left())
	pl, ok := lp.poolFor(t, &ex.to)
	if !ok {
		lp.attemptFailed(lc, upstream.Failure{Err: errBadTarget, Kind: upstream.Refused, Fresh: true}, now)
		return
	}
	ex.pool = pl
	lp.upBegin(lc, now)
}

// exDeadline sets the exchange's deadline d from now, bounded by the
// attempt's try deadline while no response head arrived.
func (lp *loop) exDeadline(ex *lexchange, now, d int64) {
	ex.dl = now + d
	if !ex.gotHead && ex.tryDL != 0 && ex.tryDL < ex.dl {
		ex.dl = ex.tryDL
	}
	lp.noteDeadline(ex.dl)
}

// attemptFailed tells the driver that the attempt failed before a
// response head was relayed, and does what it says: resend on a new
// connection, fail over to another target at once, retry after a
// backoff, or answer.
func (lp *loop) attemptFailed(lc *lconn, f upstream.Failure, now int64) {
	ex := lc.ex
	if u := ex.u; u != nil {
		u.lc, ex.u = nil, nil
		lp.closeUp(u)
	}
	ex.gotHead = false
	switch ex.a.Failed(time.Duration(now), f) {
	case upstream.StepResend:
		ex.stale = true
		lp.upBegin(lc, now)
	case upstream.StepFailover:
		lp.upSelect(lc, now)
	case upstream.StepRetry:
		lp.backoffWait(lc, now)
	default:
		lp.exAnswer(lc, now)
	}
}

// backoffWait waits for the driver's backoff before the next attempt.
func (lp *loop) backoffWait(lc *lconn, now int64) {
	ex := lc.ex
	ex.backoff, ex.tryDL = true, 0
	ex.dl = now + int64(ex.a.Backoff())
	lp.noteDeadline(ex.dl)
}

// exAnswer answers as the driver says after the attempts ended without a
// response to relay, and ends the exchange.
func (lp *loop) exAnswer(lc *lconn, now int64) {
	lc.ex.up.Answer(&lc.c.resp, lc.ex.a)
	lp.exDone(lc, false, now)
}

var errBadTarget = errors.New("server: upstream target is not an IP address")

// upBegin takes a pooled connection or connects a new one and sends the
// request.
func (lp *loop) upBegin(lc *lconn, now int64) {
	ex := lc.ex
	ex.attemptAt = now
	u, err := lp.upGet(ex.pool, now, ex.stale)
	if err != nil {
		lp.attemptFailed(lc, upstream.Failure{Err: err, Kind: upstream.Classify(err, true), Fresh: true}, now)
		return
	}
	u.lc, ex.u = lc, u
	out, ok := ex.up.AppendRequest(u.out[:0], &lc.c.resp, &lc.c.req)
	u.out, u.wpos = out, 0
	if !ok {
		lp.exDone(lc, true, now)
		return
	}
	if u.connecting {
		lp.exDeadline(ex, now, ex.pool.connect)
		return
	}
	lp.upSendSoon(lc, now)
}

// upFailed handles an upstream error (or timeout) of an exchange.
func (lp *loop) upFailed(lc *lconn, err error, now int64) {
	ex := lc.ex
	u := ex.u
	w := &lc.c.resp
	if !ex.gotHead {
		f := upstream.Failure{Err: err, Fresh: true}
		connecting := false
		if u != nil {
			f.Written, f.Read, f.Fresh, connecting = u.wpos > 0, u.w > 0, u.fresh, u.connecting
		}
		f.Kind = upstream.Classify(err, connecting)
		lp.attemptFailed(lc, f, now)
		return
	}
	if u.resp.Body == phttp.BodyUntilClose && err == io.EOF {
		lp.exDone(lc, false, now) // complete, but the connection is spent
		return
	}
	ex.up.BodyFailed(w)
	lp.exDone(lc, false, now)
}
