package main

import (
	"context"
	"errors"
	"sync"

	"github.com/simdedge/simdedge/server/admin"
)

// errBuiltinReload: there is no file to load again.
var errBuiltinReload = errors.New("nothing to reload: serving the built-in configuration")

// reloadResult is one reload's outcome, for the admin POST /reload.
type reloadResult struct {
	summary string
	err     error
}

// reloader carries POST /reload requests to the serve loop, which alone
// touches the running configuration (as for SIGHUP), and brings the
// outcome back.
type reloader struct {
	reqs     chan chan reloadResult
	stopped  chan struct{}
	stopOnce sync.Once
}

func newReloader() *reloader {
	return &reloader{reqs: make(chan chan reloadResult), stopped: make(chan struct{})}
}

// request asks the serve loop for a reload and waits for its outcome,
// the request's end, or the loop's (admin.ErrStopping).
func (rl *reloader) request(ctx context.Context) (string, error) {
	reply := make(chan reloadResult, 1) // the loop never waits on it
	select {
	case rl.reqs <- reply:
	case <-rl.stopped:
		return "", admin.ErrStopping
	case <-ctx.Done():
		return "", ctx.Err()
	}
	select {
	case r := <-reply:
		return r.summary, r.err
	case <-ctx.Done():
		return "", ctx.Err() // the reload still happens, unreported here
	}
}

// stop makes later requests fail with admin.ErrStopping (the serve loop
// is draining and will not take them).
func (rl *reloader) stop() { rl.stopOnce.Do(func() { close(rl.stopped) }) }
