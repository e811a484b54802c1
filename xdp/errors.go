package xdp

import "errors"

// Why the transport cannot start. Listen wraps one of these with the
// detail (the missing capabilities, the syscall's errno), and simdedge
// serve prints it, so each says what to change.
var (
	// ErrPermission: loading the program, attaching it or opening AF_XDP
	// sockets was refused.
	ErrPermission = errors.New("xdp: permission denied: run as root, or with CAP_BPF, CAP_NET_ADMIN and CAP_NET_RAW")
	// ErrNoInterface: the configured interface does not exist (in this
	// network namespace).
	ErrNoInterface = errors.New("xdp: no such network interface")
	// ErrKernel: the kernel lacks BPF, XDP or AF_XDP sockets
	// (CONFIG_BPF_SYSCALL, CONFIG_XDP_SOCKETS).
	ErrKernel = errors.New("xdp: the kernel does not support XDP or AF_XDP sockets")
	// ErrDriver: the interface's driver has no native XDP; generic mode
	// works with every driver.
	ErrDriver = errors.New("xdp: the interface's driver does not support native XDP (set mode: generic)")
	// ErrQueue: a configured RX queue does not exist on the interface.
	ErrQueue = errors.New("xdp: the interface has no such RX queue")
	// ErrConfig: the configuration is invalid.
	ErrConfig = errors.New("xdp: invalid configuration")
)

// Errors of a running transport.
var (
	// ErrFrameTooLarge: Transmit was given a frame larger than a UMEM
	// frame or the interface's MTU allows.
	ErrFrameTooLarge = errors.New("xdp: frame larger than the MTU or the UMEM frame")
	// ErrTXFull: every TX frame is in flight and none completed in time.
	ErrTXFull = errors.New("xdp: transmit ring full")
	// ErrReplyTooLarge: a datagram response did not fit one frame; the
	// client got the "use TCP" status instead.
	ErrReplyTooLarge = errors.New("xdp: response larger than one datagram")
	// ErrClosed: the transport is closed.
	ErrClosed = errors.New("xdp: closed")
)
