//go:build rdma && cgo

package rdma

/*
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"
	"unsafe"
)

// Completion queue: Poll and Wait are one cgo call each, which drains the
// endpoint's queue into its C-side scratch array (sd_ep.out); Go then
// converts the entries. A call costs about 40 ns
// (FACTS.md), so one call per batch keeps the boundary cheap.

func (e *Endpoint) poll(out []Completion) (int, error) {
	if len(out) == 0 {
		return 0, nil
	}
	if !e.s.hold() {
		return 0, ErrClosed
	}
	defer e.s.mu.RUnlock()
	return e.collect(out, int(C.sd_poll(e.s.c, C.int(min(len(out), math32)))))
}

// math32 caps the batch a C int can describe.
const math32 = 1 << 30

// spin is poll repeated in C (sd_spin) until something arrives, budget
// has passed, or kick is called: the busy poll of PollBusy without a cgo
// crossing, Go's bookkeeping and a goroutine yield per empty poll. The
// endpoint's Close ends it at once (sd_ep_wake sets closing).
func (e *Endpoint) spin(out []Completion, budget time.Duration) (int, error) {
	if len(out) == 0 {
		return 0, nil
	}
	if !e.s.hold() {
		return 0, ErrClosed
	}
	defer e.s.mu.RUnlock()
	return e.collect(out, int(C.sd_spin(e.s.c, C.int(min(len(out), math32)), C.int64_t(budget))))
}

// kick ends a spin in progress early (the spinning reader has receives to
// post), or the next one after one poll; unkick withdraws it, once the
// reader has taken what it was kicked for. Both are atomic stores into C
// memory, no cgo call.
func (e *Endpoint) kick()   { e.setKick(1) }
func (e *Endpoint) unkick() { e.setKick(0) }

func (e *Endpoint) setKick(v uint32) {
	if e.s.hold() {
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&e.s.c.kick)), v)
		e.s.mu.RUnlock()
	}
}

func (e *Endpoint) wait(out []Completion, timeout time.Duration) (int, error) {
	if len(out) == 0 {
		return 0, nil
	}
	if !e.s.hold() {
		return 0, ErrClosed
	}
	defer e.s.mu.RUnlock()
	if timeout > 0 {
		e.s.waitFile.SetReadDeadline(time.Now().Add(timeout))
		e.s.waitTimeout = true
	} else if e.s.waitTimeout {
		e.s.waitFile.SetReadDeadline(time.Time{})
		e.s.waitTimeout = false
	}
	e.s.waitOut, e.s.waitN, e.s.waitErr, e.s.waitFirst = min(len(out), math32), 0, 0, true
	// Read calls waitStep, and while it returns false blocks until the
	// epoll descriptor is readable, then calls it again.
	err := e.s.waitConn.Read(e.s.waitReady)
	switch {
	case e.s.closed.Load():
		return 0, ErrClosed
	case err != nil && e.s.waitN == 0:
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return 0, ErrTimeout
		}
		return 0, fmt.Errorf("rdma: waiting for completions: %w", err)
	case e.s.waitErr != 0:
		return e.collect(out, e.s.waitErr)
	}
	return e.collect(out, e.s.waitN)
}

// waitStep reads the queue, and reports whether Wait may return: something
// arrived, the peer left, Close was called, or an error. It returns false
// only after fi_trywait said that blocking on the descriptor is safe.
//
// System calls are most of the cost here (every provider call is an
// epoll_wait over the tcp provider), so it makes as few provider calls as
// it safely can. fi_trywait asks only the completion queue, unless a
// wake-up found no completion: then the wake-up may have come from the
// event queue's descriptor (a disconnect), and it asks the event queue too
// (sd_wait_prepare's full mode), which also resets that descriptor. Where
// fi_trywait itself reports pending completions (trywaitPolls), the first
// call of a Wait asks it before polling: the caller has just polled or
// posted, so the queue is most likely empty, and -FI_EAGAIN sends it on to
// poll.
func (e *Endpoint) waitStep(uintptr) bool {
	woke := !e.s.waitFirst // the call follows a wake-up
	poll := woke || !e.s.trywaitPolls
	e.s.waitFirst = false
	full := 0
	for {
		if e.s.closed.Load() {
			return true
		}
		if poll {
			n := int(C.sd_poll(e.s.c, C.int(e.s.waitOut)))
			if n != 0 {
				if n > 0 {
					e.s.waitN = n
				} else {
					e.s.waitErr = n
				}
				return true
			}
			if woke {
				full = 1
			}
		}
		poll = true
		switch r := int(C.sd_wait_prepare(e.s.c, C.int(full))); {
		case r == 0:
			return false
		case r == 1:
			return true // shutdown: collect reports ErrPeerClosed
		case r == -int(C.FI_EAGAIN):
			continue
		default:
			e.s.waitErr = r
			return true
		}
	}
}

// trywaitPolls names the providers whose fi_trywait reports completions
// already queued (-FI_EAGAIN), as the libfabric manual asks: tcp (its
// fi_trywait drives progress and reads the queue). The sockets provider's
// always answers 0, so Wait polls before asking it.
var trywaitPolls = map[string]bool{"tcp": true}

// collect converts n entries of the scratch array (or the error n < 0).
func (e *Endpoint) collect(out []Completion, n int) (int, error) {
	if n < 0 {
		if -n == int(C.FI_ETIMEDOUT) {
			return 0, ErrTimeout
		}
		return 0, fiError("fi_cq_read", e.s.f.s.name, n)
	}
	if n == 0 {
		if e.s.c.shutdown != 0 {
			return 0, ErrPeerClosed
		}
		return 0, nil
	}
	src := unsafe.Slice(e.s.c.out, n)
	for i := range src {
		c := &src[i]
		out[i] = Completion{ID: uint64(c.id), Op: Op(c.op), Len: int(c.len)}
		if c.err != 0 {
			out[i].Err = e.completionError(int(c.err))
		}
	}
	return n, nil
}

// completionError maps a failed completion: flushed work (the peer went
// away, the provider cancelled it) is ErrPeerClosed, which allocates
// nothing; other failures carry libfabric's message.
func (e *Endpoint) completionError(code int) error {
	switch err := sentinelFor(code); err {
	case ErrClosed, ErrPeerClosed:
		return ErrPeerClosed
	}
	return fiError("completion", e.s.f.s.name, -code)
}

// cgoNoop makes one cgo call that does nothing, for BenchmarkCgoCall: the
// fixed cost that batching spreads over many completions.
func cgoNoop(x int) int { return int(C.sd_noop(C.int(x))) }
