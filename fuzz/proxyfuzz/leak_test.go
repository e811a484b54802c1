package proxyfuzz

import (
	"bytes"
	"runtime"
	"time"
)

// serverFrames marks goroutines running the server's or the proxy's code
// (the test's own upstream lives in this package, not there).
var serverFrames = []byte("github.com/simdedge/simdedge/server")

// leakedServerGoroutines waits up to limit for every goroutine in the
// server or proxy packages to end, and returns the stacks of those that did
// not. After Shutdown has returned and ServeStream has ended, none may be
// left: connection loops, body pumps and deadline timers all belong to an
// exchange that is over.
func leakedServerGoroutines(limit time.Duration) []byte {
	deadline := time.Now().Add(limit)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		var leaked [][]byte
		for _, g := range bytes.Split(buf[:n], []byte("\n\n")) {
			if bytes.Contains(g, serverFrames) && !bytes.Contains(g, []byte("leakedServerGoroutines")) {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return bytes.Join(leaked, []byte("\n\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}
