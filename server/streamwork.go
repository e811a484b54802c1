package server

import (
	"sync"
	"time"

	"github.com/quic-go/quic-go"
)

// streamWorkers runs HTTP/2 and HTTP/3 stream handlers (h2stream.go's
// runStream, h3stream.go's serveStream) on long-lived goroutines, one
// Server's pool of them.
//
// Why: a new goroutine starts with the runtime's smallest stack, and the
// response path (handler, commit, HPACK/QPACK encoding: hpack's
// AppendHuffmanString) is deeper than that, so every stream paid
// runtime.newstack and copystack, 1.6-1.9 us of the 24-28 us of CPU an
// HTTP/3 request took (bench/h3/run.sh profile). A worker's stack stays
// grown between streams (the GC may halve an idle one; it grows once more
// then, not once a stream). See bench/results/stream-workers.md.
//
// Workers wait LIFO (the most recently used, whose stack and cache lines
// are warm, takes the next stream); at most maxIdleStreamWorkers wait,
// the rest end as their stream does, and one that waited streamWorkerIdle
// ends. Closing the pool (Shutdown, Close)
// ends the waiting ones; a stream started after that runs on a goroutine
// of its own, as before.
type streamWorkers struct {
	mu sync.Mutex
	// idle are the waiting workers, oldest first (a worker is taken
	// from the end, so the order is the order they began to wait).
	idle []idleWorker
	// expiry ends the workers that waited streamWorkerIdle; armed: it is
	// set to fire.
	expiry *time.Timer
	armed  bool
	closed bool
}

// idleWorker is a waiting worker: its channel and when it began to wait.
type idleWorker struct {
	ch    chan streamTask
	since time.Time
}

// streamWorkerIdle is how long a worker waits for a next stream before
// it ends: long beside the gap between a busy server's streams, short
// enough that a burst's workers do not outlive it by much (and that a
// test's goroutine check, which waits 5 s, sees them gone).
const streamWorkerIdle = time.Second

// maxIdleStreamWorkers bounds the goroutines kept waiting: a few times the
// streams in flight of a busy connection (bench/h3/run.sh runs 8), small
// beside what the server's connections hold (a waiting worker is a parked
// goroutine with its stack, a few KiB).
const maxIdleStreamWorkers = 64

// streamTask is one stream to serve: an HTTP/3 stream (h3, qs) or an
// HTTP/2 one (h2, s, p). A value, so that handing one over allocates
// nothing.
type streamTask struct {
	h3 *h3conn
	qs *quic.Stream
	h2 *h2conn
	s  *h2stream
	p  Handler
}

func (t *streamTask) run() {
	if t.h3 != nil {
		t.h3.serveStream(t.qs)
		return
	}
	t.h2.runStream(t.s, t.p)
}

// start runs t on a waiting worker, or on a new one when none waits.
func (w *streamWorkers) start(t streamTask) {
	w.mu.Lock()
	if n := len(w.idle); n > 0 {
		ch := w.idle[n-1].ch
		w.idle[n-1] = idleWorker{}
		w.idle = w.idle[:n-1]
		w.mu.Unlock()
		ch <- t // buffered: never blocks
		return
	}
	w.mu.Unlock()
	go w.work(t)
}

// work serves t, then waits for more while the pool wants it.
func (w *streamWorkers) work(t streamTask) {
	var ch chan streamTask
	for {
		t.run()
		t = streamTask{} // keeps nothing of the stream while it waits
		if ch == nil {
			ch = make(chan streamTask, 1)
		}
		w.mu.Lock()
		if w.closed || len(w.idle) >= maxIdleStreamWorkers {
			w.mu.Unlock()
			return
		}
		w.idle = append(w.idle, idleWorker{ch, time.Now()})
		if !w.armed {
			w.armExpiry(streamWorkerIdle)
		}
		w.mu.Unlock()
		var ok bool
		if t, ok = <-ch; !ok {
			return
		}
	}
}

// armExpiry sets the expiry to fire after d; under mu.
func (w *streamWorkers) armExpiry(d time.Duration) {
	w.armed = true
	if w.expiry == nil {
		w.expiry = time.AfterFunc(d, w.expire)
		return
	}
	w.expiry.Reset(d)
}

// expire ends the workers that have waited streamWorkerIdle, and sets
// the expiry again for the oldest of the others.
func (w *streamWorkers) expire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.armed = false
	if w.closed {
		return
	}
	cut := time.Now().Add(-streamWorkerIdle)
	n := 0
	for n < len(w.idle) && !w.idle[n].since.After(cut) {
		close(w.idle[n].ch)
		n++
	}
	w.idle = append(w.idle[:0], w.idle[n:]...)
	clear(w.idle[len(w.idle):cap(w.idle)])
	if len(w.idle) > 0 {
		w.armExpiry(w.idle[0].since.Sub(cut))
	}
}

// close ends the waiting workers and keeps later ones from waiting.
func (w *streamWorkers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.expiry != nil {
		w.expiry.Stop()
	}
	for _, iw := range w.idle {
		close(iw.ch)
	}
	w.idle = nil
}
