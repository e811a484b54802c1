//go:build rdma && cgo

package rdma

// CgoNoop exposes cgoNoop to the external test package's benchmarks.
var CgoNoop = cgoNoop

// SetPollSpin sets the poller's spin count and returns the previous one,
// for the benchmarks that measure whether spinning pays.
func SetPollSpin(n int) int {
	old := pollSpin
	pollSpin = n
	return old
}

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
