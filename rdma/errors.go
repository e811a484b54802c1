package rdma

import (
	"errors"
	"strings"
)

// Sentinel errors. Errors returned by the package wrap one of them (test
// with errors.Is); those that come from libfabric are *Error values that
// also carry the call, the provider and libfabric's own message.
var (
	// ErrNotSupported: the package was built without cgo or without the
	// rdma build tag.
	ErrNotSupported = errors.New("rdma: not supported in this build (needs -tags rdma and cgo)")
	// ErrNoDevice: no provider with a usable device was found (fi_getinfo
	// found nothing), e.g. the verbs provider on a host without RDMA
	// hardware or kernel support.
	ErrNoDevice = errors.New("rdma: no RDMA device or provider")
	// ErrNoProvider: the named provider is not part of this libfabric.
	ErrNoProvider = errors.New("rdma: unknown libfabric provider")
	// ErrUnsupported: the provider exists but offers no connected
	// endpoints (FI_EP_MSG) with send/receive and RMA, or lacks another
	// feature the package needs.
	ErrUnsupported = errors.New("rdma: provider lacks connected endpoints with send/receive and RMA")
	// ErrAddrInUse: Listen's address is already bound.
	ErrAddrInUse = errors.New("rdma: address in use")
	// ErrAddr: an address that does not parse as host:port.
	ErrAddr = errors.New("rdma: bad address")
	// ErrRefused: the peer rejected the connection or nothing listens.
	ErrRefused = errors.New("rdma: connection refused")
	// ErrTimeout: Dial or Wait ran out of time.
	ErrTimeout = errors.New("rdma: timeout")
	// ErrClosed: the object was closed (also the error of work flushed by
	// a local Close).
	ErrClosed = errors.New("rdma: closed")
	// ErrPeerClosed: the peer disconnected.
	ErrPeerClosed = errors.New("rdma: connection closed by peer")
	// ErrBusy: Fabric.Close while objects made from it are still open.
	ErrBusy = errors.New("rdma: fabric still has open endpoints, listeners or regions")
	// ErrRange: an offset or length outside the region, or a message
	// longer than the endpoint's MaxMessage.
	ErrRange = errors.New("rdma: offset or length outside the region or message limit")
	// ErrQueueFull: the provider's work queue is full (-FI_EAGAIN); poll
	// completions and post again.
	ErrQueueFull = errors.New("rdma: work queue full")
	// ErrOp: libfabric failed an operation for a reason the package has
	// no sentinel for; the *Error says which.
	ErrOp = errors.New("rdma: libfabric operation failed")
	// ErrOptions: invalid Options (CQSize out of range, bad provider name).
	ErrOptions = errors.New("rdma: invalid options")
)

// Error is a failure reported by libfabric: the call that failed, the
// provider it ran on, libfabric's error code and message (fi_strerror) and
// the sentinel it maps to.
type Error struct {
	Call     string // the libfabric call, e.g. "fi_getinfo"
	Provider string // provider name, "" when none was chosen
	Code     int    // libfabric's positive error code (FI_E*), 0 if none
	Msg      string // fi_strerror(Code) or the provider's error text
	Err      error  // sentinel
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	b.WriteString(" (")
	b.WriteString(e.Call)
	if e.Provider != "" {
		b.WriteString(", provider ")
		b.WriteString(safeName(e.Provider))
	}
	if e.Msg != "" {
		b.WriteString(": libfabric: ")
		b.WriteString(e.Msg)
	}
	b.WriteString(")")
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// safeName returns s when it looks like a provider name (letters, digits,
// '_', ';' joining a utility provider, at most 64 bytes), otherwise a
// placeholder: provider names come from configuration and are echoed in
// errors.
func safeName(s string) string {
	if s == "" || len(s) > 64 {
		return "(invalid name)"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == ';' || c == '-') {
			return "(invalid name)"
		}
	}
	return s
}
