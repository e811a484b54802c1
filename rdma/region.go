//go:build rdma && cgo

package rdma

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// maxRegion bounds one registration (16 GiB) so that a size computed from
// untrusted input cannot map the address space.
const maxRegion = 16 << 30

type regionState struct {
	f      *Fabric
	buf    []byte // the mapping, outside the Go heap
	base   uintptr
	mr     *C.struct_fid_mr
	desc   C.uintptr_t // fi_mr_desc, passed with every local access (not always a real pointer)
	rkey   uint64
	closed atomic.Bool
}

func (f *Fabric) register(size int) (*Region, error) {
	if size <= 0 || size > maxRegion {
		return nil, fmt.Errorf("%w: region size %d outside 1..%d", ErrRange, size, maxRegion)
	}
	page := os.Getpagesize()
	size = (size + page - 1) &^ (page - 1)
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.closed {
		return nil, ErrClosed
	}
	// The provider may touch the pages while Go code runs and after a
	// garbage collection, so they come from mmap, not from the Go heap.
	buf, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("rdma: mmap %d bytes: %w", size, err)
	}
	var reqKey uint64
	if f.s.mrMode&C.FI_MR_PROV_KEY == 0 {
		// The provider takes the key from us (else -FI_ENOKEY for the
		// second region): each region gets its own.
		f.s.nextKey++
		reqKey = f.s.nextKey
	}
	r := &Region{s: regionState{f: f, buf: buf, base: uintptr(unsafe.Pointer(&buf[0]))}}
	var key C.uint64_t
	ret := C.sd_mr_reg(f.s.c, C.uintptr_t(r.s.base), C.size_t(size), C.uint64_t(reqKey), &r.s.mr, &r.s.desc, &key)
	if ret != 0 {
		syscall.Munmap(buf)
		return nil, fiError("fi_mr_reg", f.s.name, int(ret))
	}
	r.s.rkey = uint64(key)
	f.s.regions++
	return r, nil
}

func (r *Region) bytes() []byte { return r.s.buf }
func (r *Region) key() uint64   { return r.s.rkey }

func (r *Region) addr(off int) uint64 {
	if r.s.f.s.mrMode&C.FI_MR_VIRT_ADDR != 0 {
		return uint64(r.s.base) + uint64(off)
	}
	return uint64(off)
}

func (r *Region) close() error {
	if r == nil || r.s.closed.Swap(true) {
		return nil
	}
	f := r.s.f
	ret := C.sd_mr_close(r.s.mr)
	err := syscall.Munmap(r.s.buf)
	r.s.buf = nil
	f.s.mu.Lock()
	f.s.regions--
	f.s.mu.Unlock()
	if ret != 0 {
		return fiError("fi_close(mr)", f.s.name, int(ret))
	}
	if err != nil {
		return fmt.Errorf("rdma: munmap: %w", err)
	}
	return nil
}

// span checks that [off, off+n) lies in the region and returns its address.
func (r *Region) span(off, n int) (C.uintptr_t, error) {
	if r == nil || r.s.closed.Load() {
		return 0, ErrClosed
	}
	if off < 0 || n < 0 || off > len(r.s.buf) || n > len(r.s.buf)-off {
		return 0, ErrRange
	}
	return C.uintptr_t(r.s.base + uintptr(off)), nil
}
