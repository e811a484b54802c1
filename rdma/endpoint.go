//go:build rdma && cgo

package rdma

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// Span must match sd_span, because PostRecvBatch hands the slice to C.
var _ [24 - unsafe.Sizeof(Span{})]byte
var _ [unsafe.Sizeof(Span{}) - 24]byte

type listenerState struct {
	f      *Fabric
	c      *C.sd_pep
	addr   net.Addr
	mu     sync.RWMutex // read-held by Accept; Close write-holds it to free c
	closed atomic.Bool
}

func (f *Fabric) listen(addr string) (*Listener, error) {
	host, port, err := hostPort(addr)
	if err != nil {
		return nil, err
	}
	node, service := cString(host), C.CString(port)
	defer C.free(unsafe.Pointer(node))
	defer C.free(unsafe.Pointer(service))
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.closed {
		return nil, ErrClosed
	}
	var c *C.sd_pep
	if ret := C.sd_listen(f.s.c, node, service, &c); ret != 0 {
		return nil, fiError("fi_listen", f.s.name, int(ret))
	}
	var a C.sd_addr
	C.sd_pep_getname(c, &a)
	l := &Listener{s: listenerState{f: f, c: c, addr: goAddr(&a)}}
	f.s.listeners[l] = struct{}{}
	return l, nil
}

func (l *Listener) addrOf() net.Addr { return l.s.addr }

func (l *Listener) accept() (*Endpoint, error) {
	l.s.mu.RLock()
	defer l.s.mu.RUnlock()
	if l.s.closed.Load() {
		return nil, ErrClosed
	}
	var c *C.sd_ep
	ret := C.sd_pep_accept(l.s.c, -1, &c)
	if ret == C.SD_WOKEN {
		return nil, ErrClosed
	}
	if ret != 0 {
		return nil, fiError("fi_accept", l.s.f.s.name, int(ret))
	}
	return l.s.f.adopt(c)
}

func (l *Listener) close() error {
	if l.s.closed.Swap(true) {
		return nil
	}
	C.sd_pep_wake(l.s.c) // a blocked Accept returns and drops its read lock
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	f := l.s.f
	f.s.mu.Lock()
	delete(f.s.listeners, l)
	f.s.mu.Unlock()
	ret := C.sd_pep_close(l.s.c)
	l.s.c = nil
	if ret != 0 {
		return fiError("fi_close(pep)", f.s.name, int(ret))
	}
	return nil
}

func (f *Fabric) dial(addr string, timeout time.Duration) (*Endpoint, error) {
	host, port, err := hostPort(addr)
	if err != nil {
		return nil, err
	}
	if host == "" {
		return nil, fmt.Errorf("%w: Dial needs a host", ErrAddr)
	}
	node, service := C.CString(host), C.CString(port)
	defer C.free(unsafe.Pointer(node))
	defer C.free(unsafe.Pointer(service))
	// The fabric's lock is not held while connecting (that takes a round
	// trip or the timeout); the dial counts as an open endpoint meanwhile,
	// so that Fabric.Close refuses (ErrBusy) to free the domain under it.
	f.s.mu.Lock()
	if f.s.closed {
		f.s.mu.Unlock()
		return nil, ErrClosed
	}
	f.s.dialing++
	f.s.mu.Unlock()
	defer func() {
		f.s.mu.Lock()
		f.s.dialing--
		f.s.mu.Unlock()
	}()
	var c *C.sd_ep
	if ret := C.sd_dial(f.s.c, node, service, C.int(millis(timeout)), &c); ret != 0 {
		return nil, fiError("fi_connect", f.s.name, int(ret))
	}
	return f.adopt(c)
}

// millis converts a timeout for C: -1 for none, at least 1 ms otherwise.
func millis(d time.Duration) int {
	if d <= 0 {
		return -1
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(ms)
}

type endpointState struct {
	f      *Fabric
	c      *C.sd_ep
	local  net.Addr
	remote net.Addr
	maxMsg int
	// mu is read-held by every call that uses c; Close write-holds it to
	// free c, after waking a blocked Wait.
	mu     sync.RWMutex
	closed atomic.Bool

	// Wait blocks in Go's network poller on waitFile, an epoll descriptor
	// (made in C) over the completion queue's, the event queue's and the
	// Close wake-up's descriptors, rather than in a blocking cgo call: a
	// goroutine blocked in cgo keeps its P until sysmon retakes it (up to
	// 10 ms on an idle program), the parked goroutine gives it back at
	// once. The remaining fields are Wait's state, kept here so that its
	// callback is made once, not allocated per call.
	waitFile    *os.File
	waitConn    syscall.RawConn
	waitReady   func(uintptr) bool
	waitOut     int  // batch size asked for
	waitN       int  // completions the callback read
	waitErr     int  // negative libfabric code from the callback
	waitTimeout bool // a deadline is set on waitFile
	waitFirst   bool // waitStep's first call in this Wait
	// trywaitPolls: the provider's fi_trywait reports queued
	// completions (see trywaitPolls in cq.go).
	trywaitPolls bool
}

// hold read-holds s for a call that uses c and reports true, or reports
// false, holding nothing, once Close has begun. The caller releases it
// with s.mu.RUnlock.
func (s *endpointState) hold() bool {
	s.mu.RLock()
	if s.closed.Load() {
		s.mu.RUnlock()
		return false
	}
	return true
}

func (f *Fabric) adopt(c *C.sd_ep) (*Endpoint, error) {
	var local, remote C.sd_addr
	C.sd_ep_names(c, &local, &remote)
	e := &Endpoint{s: endpointState{f: f, c: c, local: goAddr(&local), remote: goAddr(&remote),
		maxMsg: clampInt(uint64(c.info.ep_attr.max_msg_size)), trywaitPolls: trywaitPolls[f.s.name]}}
	fd := int(C.sd_ep_waitfd(c))
	if err := syscall.SetNonblock(fd, true); err != nil {
		C.sd_ep_close(c)
		return nil, fmt.Errorf("rdma: wait descriptor: %w", err)
	}
	c.waitfd = -1 // Go owns it now
	e.s.waitFile = os.NewFile(uintptr(fd), "rdma-wait")
	rc, err := e.s.waitFile.SyscallConn()
	if err != nil {
		e.s.waitFile.Close()
		C.sd_ep_close(c)
		return nil, fmt.Errorf("rdma: wait descriptor: %w", err)
	}
	e.s.waitConn = rc
	e.s.waitReady = e.waitStep
	f.s.mu.Lock()
	f.s.endpoints[e] = struct{}{}
	f.s.mu.Unlock()
	return e, nil
}

func (e *Endpoint) localAddr() net.Addr  { return e.s.local }
func (e *Endpoint) remoteAddr() net.Addr { return e.s.remote }
func (e *Endpoint) maxMessage() int      { return e.s.maxMsg }

func (e *Endpoint) close() error {
	if e.s.closed.Swap(true) {
		return nil
	}
	C.sd_ep_wake(e.s.c)
	e.s.mu.Lock()
	defer e.s.mu.Unlock()
	f := e.s.f
	f.s.mu.Lock()
	delete(f.s.endpoints, e)
	f.s.mu.Unlock()
	e.s.waitFile.Close()
	ret := C.sd_ep_close(e.s.c)
	e.s.c = nil
	if ret != 0 {
		return fiError("fi_close(ep)", f.s.name, int(ret))
	}
	return nil
}
