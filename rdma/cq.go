//go:build rdma && cgo

package rdma

/*
#include "shim.h"
*/
import "C"

import (
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
	e.s.mu.RLock()
	defer e.s.mu.RUnlock()
	if e.s.closed.Load() {
		return 0, ErrClosed
	}
	return e.collect(out, int(C.sd_poll(e.s.c, C.int(min(len(out), math32)))))
}

// math32 caps the batch a C int can describe.
const math32 = 1 << 30

func (e *Endpoint) wait(out []Completion, timeout time.Duration) (int, error) {
	if len(out) == 0 {
		return 0, nil
	}
	e.s.mu.RLock()
	defer e.s.mu.RUnlock()
	if e.s.closed.Load() {
		return 0, ErrClosed
	}
	ret := int(C.sd_wait(e.s.c, C.int(min(len(out), math32)), C.int(millis(timeout))))
	if ret == -int(C.FI_ECANCELED) {
		return 0, ErrClosed
	}
	return e.collect(out, ret)
}

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
