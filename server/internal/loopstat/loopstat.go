// Package loopstat counts what the event-loop engine (package server) hands
// to goroutines, so that tests in any package under server/ can assert
// that a request was served on the loop itself (an HSTS route over TLS,
// say) without a hook in the request path: the count is taken on the
// hand-off, which already costs a system call and a goroutine.
package loopstat

import "sync/atomic"

// Handoffs counts the connections the loop handed to the goroutine path
// since the process started (every listener, every server).
var Handoffs atomic.Int64
