//go:build rdma && cgo

package rdma

// CgoNoop exposes cgoNoop to the external test package's benchmarks.
var CgoNoop = cgoNoop

// KeepDone makes c withhold the "done" of rendezvous response parts, as a
// misbehaving client would.
func KeepDone(c *Client) { c.noDone = true }

// DrivenReads is how many response pieces c's callers read from the
// completion queue themselves (the queue lent to them).
func DrivenReads(c *Client) uint64 {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	return c.c.driven
}

// ClientParked reports whether c's completion queue reader is blocked in
// Endpoint.Wait (not polling).
func ClientParked(c *Client) bool {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	return c.c.parked
}

// ListenerParked counts ml's connections and those whose poller is
// blocked in Endpoint.Wait.
func ListenerParked(ml *MessageListener) (parked, conns int) {
	ml.mu.Lock()
	defer ml.mu.Unlock()
	for sc := range ml.conns {
		sc.c.mu.Lock()
		if sc.c.parked {
			parked++
		}
		sc.c.mu.Unlock()
		conns++
	}
	return parked, conns
}

// LateReplies is how many inline requests of ml had a response part that
// could not go out at once (no credit or send slot, or a rendezvous part)
// and was sent from a goroutine.
func LateReplies(ml *MessageListener) int64 { return ml.late.Load() }

// WithPollFD asks o's fabric for FI_WAIT_POLLFD completion queues, as the
// transport does for PollBusy connections.
func WithPollFD(o Options) Options { o.pollFD = true; return o }

// UsesPollFD reports whether e's completion queue waits on FI_WAIT_POLLFD
// (the provider may have refused it).
func UsesPollFD(e *Endpoint) bool {
	if !e.s.hold() {
		return false
	}
	defer e.s.mu.RUnlock()
	return e.s.c.pollfd != 0
}
