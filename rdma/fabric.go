//go:build rdma && cgo

package rdma

/*
#cgo LDFLAGS: -lfabric
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// hardwareProviders are providers that need a device: when libfabric has
// none of them, the host has no such device (libfabric registers these
// providers only when it finds hardware), so the error is ErrNoDevice rather
// than ErrNoProvider.
var hardwareProviders = map[string]bool{
	"verbs": true, "efa": true, "psm2": true, "psm3": true, "opx": true,
	"cxi": true, "usnic": true, "gni": true, "bgq": true,
}

// maxCQSize bounds Options.CQSize so that a configuration typo cannot ask
// the provider for gigabytes of queue memory.
const maxCQSize = 1 << 16

type fabricState struct {
	c      *C.sd_fabric
	name   string
	maxMsg int
	mrMode uint64

	mu        sync.Mutex // guards the fields below
	closed    bool
	nextKey   uint64 // requested_key of the next region without FI_MR_PROV_KEY
	regions   int
	dialing   int // Dial calls connecting
	listeners map[*Listener]struct{}
	endpoints map[*Endpoint]struct{}
}

// fabrics is every open Fabric, for the process-wide Stats.
var fabrics struct {
	sync.Mutex
	m map[*Fabric]struct{}
}

func openFabric(o Options) (*Fabric, error) {
	if o.CQSize == 0 {
		o.CQSize = DefaultCQSize
	}
	if o.CQSize < 1 || o.CQSize > maxCQSize {
		return nil, fmt.Errorf("%w: CQSize %d outside 1..%d", ErrOptions, o.CQSize, maxCQSize)
	}
	if o.Provider != "" && safeName(o.Provider) != o.Provider {
		return nil, fmt.Errorf("%w: provider name must be letters, digits, '_', '-' or ';'", ErrOptions)
	}
	if strings.IndexByte(o.Node, 0) >= 0 {
		return nil, fmt.Errorf("%w: node contains a NUL byte", ErrOptions)
	}
	prov := C.CString(o.Provider)
	defer C.free(unsafe.Pointer(prov))
	node := C.CString(o.Node)
	defer C.free(unsafe.Pointer(node))
	var c *C.sd_fabric
	if ret := C.sd_fabric_open(prov, node, C.int(o.CQSize), &c); ret != 0 {
		return nil, openError(o, int(ret), prov)
	}
	if o.pollFD {
		c.pollfd = 1
	}
	f := &Fabric{s: fabricState{
		c:         c,
		name:      C.GoString(C.sd_provider_name(c)),
		mrMode:    uint64(c.mr_mode),
		listeners: map[*Listener]struct{}{},
		endpoints: map[*Endpoint]struct{}{},
	}}
	f.s.maxMsg = clampInt(uint64(C.sd_max_msg(c)))
	fabrics.Lock()
	if fabrics.m == nil {
		fabrics.m = map[*Fabric]struct{}{}
	}
	fabrics.m[f] = struct{}{}
	fabrics.Unlock()
	return f, nil
}

// openError explains why no fabric opened: -FI_ENODATA from fi_getinfo
// means nothing matched, which is a missing device, a missing provider or a
// provider without what the package needs, told apart by asking libfabric
// about the provider alone.
func openError(o Options, code int, prov *C.char) error {
	name := o.Provider
	if -code != int(C.FI_ENODATA) {
		return fiError("fi_getinfo/fi_fabric/fi_domain", name, code)
	}
	e := fiError("fi_getinfo", name, code).(*Error)
	switch {
	case name == "":
		e.Err = ErrNoDevice
		e.Msg += "; no provider offers connected (FI_EP_MSG) endpoints with send/receive and RMA"
	case C.sd_provider_exists(prov) == 1:
		e.Err = ErrUnsupported
		e.Msg += "; the provider has no connected (FI_EP_MSG) endpoints with send/receive, RMA and thread safety"
		if o.Node != "" {
			e.Msg += " serving the configured node"
		}
	case hardwareProviders[name]:
		e.Err = ErrNoDevice
		e.Msg += "; libfabric found no device for this provider (no RDMA hardware or kernel driver)"
	default:
		e.Err = ErrNoProvider
		e.Msg += "; the provider is not part of this libfabric (fi_info -l lists those that are)"
	}
	return e
}

// fiError builds the *Error for libfabric's (negative) return code ret.
func fiError(call, provider string, ret int) error {
	code := ret
	if code < 0 {
		code = -code
	}
	return &Error{Call: call, Provider: safeName0(provider), Code: code,
		Msg: C.GoString(C.fi_strerror(C.int(code))), Err: sentinelFor(code)}
}

// safeName0 is safeName that keeps "" (no provider chosen) empty.
func safeName0(s string) string {
	if s == "" {
		return ""
	}
	return safeName(s)
}

// sentinelFor maps a positive FI_E* code to the package's sentinel.
func sentinelFor(code int) error {
	switch C.int(code) {
	case C.FI_EADDRINUSE:
		return ErrAddrInUse
	case C.FI_ECONNREFUSED:
		return ErrRefused
	case C.FI_ETIMEDOUT:
		return ErrTimeout
	case C.FI_EAGAIN:
		return ErrQueueFull
	case C.FI_ECANCELED:
		return ErrClosed
	case C.FI_ECONNRESET, C.FI_ECONNABORTED, C.FI_ENOTCONN, C.FI_ESHUTDOWN:
		return ErrPeerClosed
	case C.FI_ENOSYS, C.FI_EOPNOTSUPP, C.FI_ENOPROTOOPT, C.FI_EBADFLAGS:
		return ErrUnsupported
	case C.FI_ENODATA, C.FI_ENODEV, C.FI_EADDRNOTAVAIL:
		return ErrNoDevice
	}
	return ErrOp
}

func clampInt(v uint64) int {
	if v > math.MaxInt {
		return math.MaxInt
	}
	return int(v)
}

func (f *Fabric) provider() string { return f.s.name }

func (f *Fabric) close() error {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	if f.s.closed {
		return nil
	}
	if f.s.regions != 0 || len(f.s.listeners) != 0 || len(f.s.endpoints) != 0 || f.s.dialing != 0 {
		return fmt.Errorf("%w (%d endpoints, %d connecting, %d listeners, %d regions)", ErrBusy,
			len(f.s.endpoints), f.s.dialing, len(f.s.listeners), f.s.regions)
	}
	f.s.closed = true
	fabrics.Lock()
	delete(fabrics.m, f)
	fabrics.Unlock()
	if ret := C.sd_fabric_close(f.s.c); ret != 0 {
		return fiError("fi_close(domain/fabric)", f.s.name, int(ret))
	}
	f.s.c = nil
	return nil
}

func (f *Fabric) stats() Counts {
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	var c Counts
	if !f.s.closed {
		c.Fabrics = 1
	}
	c.Regions = f.s.regions
	c.Listeners = len(f.s.listeners)
	c.Endpoints = len(f.s.endpoints)
	// Endpoints leave the map (under f.s.mu) before their C side is
	// freed, so every one here is still alive.
	for e := range f.s.endpoints {
		var r, o C.int64_t
		C.sd_ep_counts(e.s.c, &r, &o)
		c.Recvs += int(r)
		c.Ops += int(o)
	}
	return c
}

// processStats sums the open fabrics' counts. It copies the set and lets
// go of the set's lock before it takes each fabric's: Fabric.close holds
// its fabric's lock while it takes the set's, and taking them in the other
// order deadlocked Stats against a closing fabric (seen once, in CI's
// -race run of TestTransportDisconnect). A fabric closed in between counts
// as closed.
func processStats() Counts {
	fabrics.Lock()
	open := make([]*Fabric, 0, len(fabrics.m))
	for f := range fabrics.m {
		open = append(open, f)
	}
	fabrics.Unlock()
	var c Counts
	for _, f := range open {
		s := f.stats()
		c.Fabrics += s.Fabrics
		c.Regions += s.Regions
		c.Listeners += s.Listeners
		c.Endpoints += s.Endpoints
		c.Recvs += s.Recvs
		c.Ops += s.Ops
	}
	return c
}

// hostPort splits addr for fi_getinfo: the host may be empty (the domain's
// own address), the port must be a number. Bad addresses are not echoed.
func hostPort(addr string) (host, port string, err error) {
	host, port, err = net.SplitHostPort(addr)
	if err != nil || strings.IndexByte(host, 0) >= 0 {
		return "", "", fmt.Errorf("%w: want host:port", ErrAddr)
	}
	if p, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", "", fmt.Errorf("%w: port must be a number 0..65535", ErrAddr)
	} else {
		port = strconv.FormatUint(p, 10)
	}
	return host, port, nil
}

// goAddr converts the C side's address.
func goAddr(a *C.sd_addr) net.Addr {
	var ip netip.Addr
	switch a.family {
	case 4:
		ip = netip.AddrFrom4([4]byte(C.GoBytes(unsafe.Pointer(&a.ip[0]), 4)))
	case 6:
		ip = netip.AddrFrom16([16]byte(C.GoBytes(unsafe.Pointer(&a.ip[0]), 16)))
	default:
		return Addr{}
	}
	return Addr{netip.AddrPortFrom(ip, uint16(a.port))}
}

// cString is C.CString for the optional host (nil when empty).
func cString(s string) *C.char {
	if s == "" {
		return nil
	}
	return C.CString(s)
}
