package server

import (
	"errors"
	"os"
	"time"

	phttp "github.com/simdedge/simdedge/parse/http"
)

// parkAfter is how long a keep-alive connection of the goroutine engine
// waits for its next request with its conn, buffers and goroutine before
// it parks in the poller (idlepoll_linux.go). A connection that sends
// requests more often never parks, so the request path costs what it did:
// no epoll_ctl, no new goroutine. Parking and resuming cost a few
// microseconds and a few small allocations (the parked record, its timer,
// the resumed goroutine), once per half second of idleness at most.
const parkAfter = 500 * time.Millisecond

// errParked ends readHead when the connection parked.
var errParked = errors.New("server: connection parked")

// idleWait is the wait of a keep-alive connection for its next request
// before something happens: its Idle timeout, or parkAfter if it parks
// sooner.
func (c *conn) idleWait() time.Duration {
	d := c.cfg.Timeouts.Idle
	if c.canPark && (d <= 0 || d > 2*parkAfter) {
		return parkAfter
	}
	return d
}

// parkIdle decides, after the idle read of an established connection
// returned err with nothing, whether it parks: the read timed out at
// parkAfter, before the Idle timeout. The state word w goes back (the wait
// goes on, visible to Shutdown and reclaimIdle). The connection's
// goroutine then returns; run hands c to the poller.
func (c *conn) parkIdle(err error, w int64) bool {
	if !c.canPark || !errors.Is(err, os.ErrDeadlineExceeded) || c.r != c.w || len(c.out) != 0 {
		return false
	}
	if d := c.cfg.Timeouts.Idle; d > 0 && !time.Now().Before(c.now.Add(d)) {
		return false // due: the timeout closes it, as before
	}
	c.state.Store(w)
	if c.srv.closing.Load() {
		return false
	}
	// The parsed head's views (its scanner's too) would keep the read
	// buffer alive past the conn's reuse; a body gathered once
	// (bodybuf.go) is not kept for a request that may never come.
	c.req.head = phttp.Request{}
	c.req.bodyBuf = nil
	return true
}

// resumeDeadline is the read deadline of a wait that goes on after a
// park: parkAfter from now (it parks again if nothing comes, as when the
// poller woke it early), or the Idle timeout if that comes first.
func (c *conn) resumeDeadline() time.Time {
	dl := time.Now().Add(parkAfter)
	if d := c.cfg.Timeouts.Idle; d > 0 && c.now.Add(d).Before(dl) {
		dl = c.now.Add(d)
	}
	return dl
}
