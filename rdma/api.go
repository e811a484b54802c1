package rdma

import (
	"fmt"
	"net"
	"net/netip"
	"time"
)

// Options select and size a Fabric.
type Options struct {
	// Provider is the libfabric provider name: "tcp", "sockets", "verbs",
	// ... Empty takes the first provider that offers connected endpoints
	// (FI_EP_MSG) with send/receive and RMA.
	Provider string
	// Node is a local address (or host name) the domain must serve: the
	// tcp provider has one domain per interface, and without a node it
	// picks the first (eth0 here), not loopback. Listen and Dial pass their
	// own addresses too; Node only chooses the domain. Empty leaves the
	// choice to the provider.
	Node string
	// CQSize is the number of entries of each completion queue and the
	// depth the endpoint asks for on its send and receive queues; 0 means
	// DefaultCQSize. Providers may round it up.
	CQSize int

	// pollFD asks for FI_WAIT_POLLFD completion queues where the provider
	// has them (the transport's PollBusy connections; see sd_ep_open).
	pollFD bool
}

// DefaultCQSize is the completion-queue size when Options.CQSize is 0: the
// tcp provider's default queue depth, enough for a credit window of a few
// hundred messages.
const DefaultCQSize = 256

// Fabric is an opened provider: fabric, domain and the attributes the
// endpoints and regions created from it share. It is safe for concurrent
// use. Close it after the endpoints, listeners and regions made from it.
type Fabric struct{ s fabricState }

// OpenFabric finds a provider matching o (fi_getinfo) and opens its fabric
// and domain. Errors wrap ErrNoDevice, ErrNoProvider or ErrUnsupported and
// name the provider and what libfabric returned.
func OpenFabric(o Options) (*Fabric, error) { return openFabric(o) }

// Close releases the domain and fabric. It fails with ErrBusy while
// endpoints, listeners or regions of the fabric remain open; calling it
// again returns nil.
func (f *Fabric) Close() error { return f.close() }

// Provider returns the name of the provider the fabric runs on.
func (f *Fabric) Provider() string { return f.provider() }

// Stats counts the fabric's open objects.
func (f *Fabric) Stats() Counts { return f.stats() }

// Counts are numbers of open libfabric objects and outstanding work: leak
// tests check that they return to zero.
type Counts struct {
	Fabrics   int // open fabrics (process-wide counts only)
	Listeners int // open passive endpoints
	Endpoints int // open connected endpoints
	Regions   int // registered regions
	// Recvs are receives posted and not yet completed (a receive
	// flushed by Close counts as completed).
	Recvs int
	// Ops are sends, reads and writes posted and not yet completed.
	Ops int
}

// Stats returns the process-wide counts of open objects.
func Stats() Counts { return processStats() }

// Region is memory allocated outside the Go heap (mmap) and registered with
// the domain, so the provider and remote peers (with its key) may access it
// at any time. Bytes stays valid until Close; after Close it must not be
// touched. A Region is safe for concurrent use; what is in its bytes is the
// caller's business.
type Region struct{ s regionState }

// Register maps size bytes (rounded up to whole pages) and registers them
// for local send/receive and remote read/write.
func (f *Fabric) Register(size int) (*Region, error) { return f.register(size) }

// Bytes returns the whole region.
func (r *Region) Bytes() []byte { return r.bytes() }

// Key returns the remote key peers use for RMA on the region.
func (r *Region) Key() uint64 { return r.key() }

// Addr returns the address a remote peer passes to PostRead/PostWrite to
// reach offset off: the virtual address when the provider works with
// virtual addresses (FI_MR_VIRT_ADDR), otherwise the offset itself.
func (r *Region) Addr(off int) uint64 { return r.addr(off) }

// Close deregisters and unmaps the region. Operations still posted on it
// must have completed (or their endpoints closed) first; calling Close again
// returns nil.
func (r *Region) Close() error { return r.close() }

// Listener is a passive endpoint listening for connection requests.
type Listener struct{ s listenerState }

// Listen binds a passive endpoint to addr ("127.0.0.1:7471"; port 0 picks
// one) and listens. A bound address fails with ErrAddrInUse.
func (f *Fabric) Listen(addr string) (*Listener, error) { return f.listen(addr) }

// Accept waits for a connection request, accepts it and returns the
// connected endpoint. After Close it returns ErrClosed. Other errors concern
// one connection attempt (a peer that gave up, say): call Accept again.
// Accept may be called from one goroutine at a time.
func (l *Listener) Accept() (*Endpoint, error) { return l.accept() }

// Addr returns the address the listener is bound to.
func (l *Listener) Addr() net.Addr { return l.addrOf() }

// Close stops listening; a blocked Accept returns ErrClosed. Endpoints
// already accepted stay open. Calling Close again returns nil.
func (l *Listener) Close() error { return l.close() }

// Dial connects to a listener at addr within timeout (0 means no limit).
// A refused connection returns ErrRefused, an expired timeout ErrTimeout.
// The fabric's domain must reach addr: Options.Node names a local address
// (for tcp, the interface), never the remote one.
func (f *Fabric) Dial(addr string, timeout time.Duration) (*Endpoint, error) {
	return f.dial(addr, timeout)
}

// Endpoint is a connected FI_EP_MSG endpoint with its own completion queue,
// which takes the completions of both directions (Completion.Op tells them
// apart). Posts may come from several goroutines at once; Poll
// and Wait from one goroutine at a time (they drain shared queues). Close
// is safe at any time, also concurrently with the others.
type Endpoint struct{ s endpointState }

// Op is the kind of a work request.
type Op uint8

// Kinds of work requests.
const (
	OpRecv  Op = iota + 1 // a posted receive took a message
	OpSend                // a send left the local buffer
	OpRead                // an RDMA READ filled the local buffer
	OpWrite               // an RDMA WRITE reached the remote buffer
)

var opNames = [...]string{OpRecv: "recv", OpSend: "send", OpRead: "read", OpWrite: "write"}

func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Completion is one finished work request.
type Completion struct {
	ID  uint64 // the id given when the work was posted
	Op  Op     // what the work was
	Len int    // bytes received (OpRecv); the posted length otherwise
	// Err is nil on success. Work flushed by Close or by a disconnect
	// completes with an error wrapping ErrClosed or ErrPeerClosed;
	// provider failures wrap ErrOp and carry libfabric's message.
	Err error
}

// Span is one buffer of a batched post: n bytes at offset Off of the
// region, with work-request id ID.
type Span struct {
	Off, Len int
	ID       uint64
}

// PostRecv posts a receive of up to n bytes into r at off. The completion
// comes with id and the received length.
func (e *Endpoint) PostRecv(r *Region, off, n int, id uint64) error {
	return e.postRecv(r, off, n, id)
}

// PostRecvBatch posts one receive per span, in one cgo call. It returns how
// many were posted; on an error the rest were not.
func (e *Endpoint) PostRecvBatch(r *Region, spans []Span) (int, error) {
	return e.postBatch(OpRecv, r, spans)
}

// PostSend posts a send of the n bytes of r at off as one message. The
// buffer must stay untouched until the send completes.
func (e *Endpoint) PostSend(r *Region, off, n int, id uint64) error {
	return e.postSend(r, off, n, id)
}

// PostSendBatch posts one send per span, in one cgo call, in order. It
// returns how many were posted; on an error the rest were not.
func (e *Endpoint) PostSendBatch(r *Region, spans []Span) (int, error) {
	return e.postBatch(OpSend, r, spans)
}

// PostRead posts a one-sided RDMA READ of n bytes from the peer's region at
// remoteAddr (its Region.Addr) with remoteKey (its Region.Key) into r at
// off. The peer's CPU is not involved.
func (e *Endpoint) PostRead(r *Region, off, n int, remoteAddr, remoteKey, id uint64) error {
	return e.postRMA(OpRead, r, off, n, remoteAddr, remoteKey, id)
}

// PostWrite posts a one-sided RDMA WRITE of the n bytes of r at off into the
// peer's region at remoteAddr with remoteKey.
func (e *Endpoint) PostWrite(r *Region, off, n int, remoteAddr, remoteKey, id uint64) error {
	return e.postRMA(OpWrite, r, off, n, remoteAddr, remoteKey, id)
}

// Poll fills out with finished work from the completion queue without
// blocking, in one cgo call, and returns how many it filled. Once the peer
// has disconnected, Poll on the empty queue returns ErrPeerClosed (it looks
// for the disconnect every few dozen empty polls, since the look may cost a
// system call); after Close, ErrClosed.
//
// Over software providers (tcp, sockets) an endpoint makes progress only
// while its queue is read: a peer's RDMA READ of this side's memory, or a
// large send, moves only while this side calls Poll or Wait. Hardware
// providers (verbs) need no such help.
func (e *Endpoint) Poll(out []Completion) (int, error) { return e.poll(out) }

// Wait is Poll that blocks until at least one completion, a disconnect,
// Close or the timeout (ErrTimeout; 0 or less means no limit).
func (e *Endpoint) Wait(out []Completion, timeout time.Duration) (int, error) {
	return e.wait(out, timeout)
}

// LocalAddr returns the endpoint's local address.
func (e *Endpoint) LocalAddr() net.Addr { return e.localAddr() }

// RemoteAddr returns the peer's address.
func (e *Endpoint) RemoteAddr() net.Addr { return e.remoteAddr() }

// MaxMessage returns the largest message a send or receive may carry (the
// provider's max_msg_size, capped at the largest int).
func (e *Endpoint) MaxMessage() int { return e.maxMessage() }

// Close disconnects (the peer sees ErrPeerClosed), discards posted work
// and frees the endpoint's queues. Calling it again returns nil.
func (e *Endpoint) Close() error { return e.close() }

// Addr is the address of a listener or endpoint: an IP address and port
// for the socket-addressed providers (tcp, sockets, verbs over IP). It is
// the zero AddrPort when the provider uses another address format.
type Addr struct{ netip.AddrPort }

// Network returns "rdma".
func (Addr) Network() string { return "rdma" }
