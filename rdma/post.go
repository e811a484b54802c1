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

// Posting: each call checks the span against the region, then makes one
// cgo call that takes a context slot and calls fi_recv/fi_send/fi_read/
// fi_write (see shim.c). Nothing of Go's memory reaches C except the
// batch's []Span, for the duration of the call.

var callNames = [...]string{OpRecv: "fi_recv", OpSend: "fi_send", OpRead: "fi_read", OpWrite: "fi_write"}

func (e *Endpoint) postRecv(r *Region, off, n int, id uint64) error {
	return e.post(OpRecv, r, off, n, 0, 0, id)
}

func (e *Endpoint) postSend(r *Region, off, n int, id uint64) error {
	return e.post(OpSend, r, off, n, 0, 0, id)
}

func (e *Endpoint) postRMA(op Op, r *Region, off, n int, raddr, rkey, id uint64) error {
	return e.post(op, r, off, n, raddr, rkey, id)
}

func (e *Endpoint) post(op Op, r *Region, off, n int, raddr, rkey, id uint64) error {
	buf, err := r.span(off, n)
	if err != nil {
		return err
	}
	if n > e.s.maxMsg {
		return ErrRange
	}
	if !e.s.hold() {
		return ErrClosed
	}
	defer e.s.mu.RUnlock()
	ret := C.sd_post(e.s.c, C.int(op), buf, C.size_t(n), r.s.desc, C.uint64_t(raddr), C.uint64_t(rkey), C.uint64_t(id))
	if ret != 0 {
		return e.postError(op, int(ret))
	}
	return nil
}

// postError maps a failed post; the hot failures (queue full, peer gone)
// are bare sentinels that allocate nothing.
func (e *Endpoint) postError(op Op, ret int) error {
	switch err := sentinelFor(-ret); err {
	case ErrQueueFull, ErrPeerClosed:
		return err
	}
	return fiError(callNames[op], e.s.f.s.name, ret)
}

func (e *Endpoint) postBatch(op Op, r *Region, spans []Span) (int, error) {
	for i := range spans {
		if _, err := r.span(spans[i].Off, spans[i].Len); err != nil {
			return 0, err
		}
		if spans[i].Len > e.s.maxMsg {
			return 0, ErrRange
		}
	}
	if len(spans) == 0 {
		return 0, nil
	}
	spans = spans[:min(len(spans), math32)] // C counts in int; the queue fills long before
	if !e.s.hold() {
		return 0, ErrClosed
	}
	defer e.s.mu.RUnlock()
	res := int64(C.sd_post_batch(e.s.c, C.int(op), C.uintptr_t(r.s.base), r.s.desc,
		(*C.sd_span)(unsafe.Pointer(&spans[0])), C.int(len(spans))))
	posted, code := int(uint32(res)), int(res>>32)
	if code != 0 {
		return posted, e.postError(op, -code)
	}
	return posted, nil
}

// unsignaled marks a send span of exchange that needs no completion when
// the endpoint was bound for selective completion (selective reports it).
// It is bit 55 of the id, outside the transport's work-request kinds.
const unsignaled = uint64(C.SD_UNSIGNALED)

// selective reports whether sends marked unsignaled complete silently.
func (e *Endpoint) selective() bool { return e.s.c != nil && e.s.c.selective != 0 }

// exchange posts recvs into rr, then sends from sr, then polls up to
// len(out) completions into out (spinning as Endpoint.spin does, for up to
// spin, when spin is positive), all in one cgo call: what the message
// transport does per step, which as separate calls cost a crossing each
// (the provider's own work is the same). It returns how many completions
// it read; posted tells how many operations were posted (recvs first)
// when err is not nil. The spans must lie in their regions.
func (e *Endpoint) exchange(rr *Region, recvs []Span, sr *Region, sends []Span, out []Completion, spin time.Duration) (n, posted int, err error) {
	var rbase, rdesc, sbase, sdesc C.uintptr_t
	var rp, sp *C.sd_span
	if len(recvs) > 0 {
		if rr == nil || rr.s.closed.Load() {
			return 0, 0, ErrClosed
		}
		rbase, rdesc, rp = C.uintptr_t(rr.s.base), rr.s.desc, (*C.sd_span)(unsafe.Pointer(&recvs[0]))
	}
	if len(sends) > 0 {
		if sr == nil || sr.s.closed.Load() {
			return 0, 0, ErrClosed
		}
		sbase, sdesc, sp = C.uintptr_t(sr.s.base), sr.s.desc, (*C.sd_span)(unsafe.Pointer(&sends[0]))
	}
	if !e.s.hold() {
		return 0, 0, ErrClosed
	}
	defer e.s.mu.RUnlock()
	// The counts fit: recvs and sends are bounded by the queue sizes
	// (maxCQSize) and polls by the scratch array.
	res := int64(C.sd_exchange(e.s.c, rbase, rdesc, rp, C.int(len(recvs)), sbase, sdesc, sp, C.int(len(sends)),
		C.int(min(len(out), 1<<20)), C.int64_t(spin)))
	posted, got, code := int(res&(1<<24-1)), int(res>>24&(1<<24-1)), int(res>>48)
	if code != 0 {
		op := OpSend
		if posted < len(recvs) {
			op = OpRecv
		}
		if posted == len(recvs)+len(sends) {
			_, err = e.collect(out, -code) // the poll failed
			return 0, posted, err
		}
		return 0, posted, e.postError(op, -code)
	}
	if len(out) == 0 {
		return 0, posted, nil
	}
	n, err = e.collect(out, got)
	return n, posted, err
}
