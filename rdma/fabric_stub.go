//go:build !rdma || !cgo

package rdma

import (
	"net"
	"time"
)

// The not-supported twin: the types exist so that callers build everywhere,
// and every constructor fails with ErrNotSupported. Methods on values that
// cannot exist (no constructor succeeds) still answer sanely.

// The state types keep the one field each that the stub's methods read.
type fabricState struct{ name string }
type regionState struct{ buf []byte }
type listenerState struct{ addr net.Addr }
type endpointState struct{ maxMsg int }

func openFabric(o Options) (*Fabric, error) { _ = o.pollFD; return nil, ErrNotSupported }
func processStats() Counts                  { return Counts{} }

func (f *Fabric) close() error                                    { return nil }
func (f *Fabric) provider() string                                { return f.s.name }
func (f *Fabric) stats() Counts                                   { return Counts{} }
func (f *Fabric) register(int) (*Region, error)                   { return nil, ErrNotSupported }
func (f *Fabric) listen(string) (*Listener, error)                { return nil, ErrNotSupported }
func (f *Fabric) dial(string, time.Duration) (*Endpoint, error)   { return nil, ErrNotSupported }
func (r *Region) bytes() []byte                                   { return r.s.buf }
func (r *Region) key() uint64                                     { return 0 }
func (r *Region) addr(int) uint64                                 { return 0 }
func (r *Region) close() error                                    { return nil }
func (l *Listener) accept() (*Endpoint, error)                    { return nil, ErrNotSupported }
func (l *Listener) addrOf() net.Addr                              { return l.s.addr }
func (l *Listener) close() error                                  { return nil }
func (e *Endpoint) postRecv(*Region, int, int, uint64) error      { return ErrNotSupported }
func (e *Endpoint) postSend(*Region, int, int, uint64) error      { return ErrNotSupported }
func (e *Endpoint) postBatch(Op, *Region, []Span) (int, error)    { return 0, ErrNotSupported }
func (e *Endpoint) poll([]Completion) (int, error)                { return 0, ErrNotSupported }
func (e *Endpoint) wait([]Completion, time.Duration) (int, error) { return 0, ErrNotSupported }
func (e *Endpoint) localAddr() net.Addr                           { return nil }
func (e *Endpoint) remoteAddr() net.Addr                          { return nil }
func (e *Endpoint) maxMessage() int                               { return e.s.maxMsg }
func (e *Endpoint) close() error                                  { return nil }

func (e *Endpoint) postRMA(Op, *Region, int, int, uint64, uint64, uint64) error {
	return ErrNotSupported
}
