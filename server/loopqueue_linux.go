//go:build linux

package server

import (
	"sync"
	"sync/atomic"

	"github.com/simdedge/simdedge/server/upstream"
)

// The loop's side of an upstream's admission queue (max_conns_per_target):
// a request that finds every target at its cap is queued with the
// exchange's upstream.Waiter (Pool.Acquire never blocks). The Waiter's
// Notify runs on whichever goroutine or loop released a slot: it puts the
// connection on this loop's woken list and writes the loop's eventfd; the
// loop then tries the selection again (runWoken). queue.timeout is the
// exchange's deadline on the loop clock, after which the request gets 503.
// Spurious wake-ups (a connection that ended or moved on) are harmless:
// runWoken looks only at exchanges still queued.

// loopWaiters is a loop's list of connections whose waiter was notified.
type loopWaiters struct {
	// n is len(woken), read by the loop without the lock on every turn.
	n     atomic.Int32
	mu    sync.Mutex
	woken []*lconn
	spare []*lconn
}

// waiterFor returns the connection's waiter for an upstream with a
// connection cap (nil otherwise: the pool has no queue), made once per
// lconn (lconns are reused) with its Notify bound to lc and never
// written again: a releasing goroutine may read it at any time.
func (lp *loop) waiterFor(lc *lconn) *upstream.Waiter {
	if lc.ex.to.Queue <= 0 {
		return nil
	}
	if lc.qwait == nil {
		w := &upstream.Waiter{}
		w.Notify = func() { lp.notifyWaiter(lc) }
		lc.qwait = w
	}
	return lc.qwait
}

// notifyWaiter is a Waiter's Notify: it must not block.
func (lp *loop) notifyWaiter(lc *lconn) {
	q := &lp.waiters
	q.mu.Lock()
	q.woken = append(q.woken, lc)
	q.n.Store(int32(len(q.woken)))
	q.mu.Unlock()
	lp.wake()
}

// runWoken selects again for the queued exchanges whose waiter was
// notified.
func (lp *loop) runWoken(now int64) {
	q := &lp.waiters
	q.mu.Lock()
	woken := q.woken
	q.woken, q.spare = q.spare[:0], nil
	q.n.Store(0)
	q.mu.Unlock()
	for i, lc := range woken {
		woken[i] = nil
		if lc.c != nil && lc.ex.active && lc.ex.queued {
			lc.ex.queued = false
			lp.upSelect(lc, now)
		}
	}
	q.mu.Lock()
	if q.spare == nil {
		q.spare = woken[:0]
	}
	q.mu.Unlock()
}

// unqueue takes a queued exchange out of its upstream's queue (the
// client went away, or its queue timeout passed).
func (lp *loop) unqueue(lc *lconn) {
	if ex := lc.ex; ex.queued {
		ex.queued = false
		ex.a.CancelWait()
	}
}
