package upstream

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the admission queue (used when max_conns_per_target is set).
const (
	DefaultQueueSize    = 1024
	DefaultQueueTimeout = time.Second
)

// Errors of admission.
var (
	// ErrQueueFull: every target is at its cap and the queue is full.
	ErrQueueFull = errors.New("upstream: admission queue full")
	// ErrQueueTimeout: the request waited queue.timeout without a slot.
	ErrQueueTimeout = errors.New("upstream: admission queue timeout")
	// ErrQueued: Acquire queued the waiter; its Notify will be called
	// when a slot may be free.
	ErrQueued = errors.New("upstream: request queued")
)

// Waiter is a request waiting for a slot. The engine keeps it in its
// per-request state. Notify is called (once per wake, on the goroutine or
// loop that released a slot, never under a lock the engine holds) when
// the request should call Acquire again; it must not block: an event loop
// sets a flag and writes its eventfd, a goroutine signals a channel.
// Spurious notifications are harmless: Acquire queues the waiter again.
type Waiter struct {
	Notify func()
	// gen is the pool's release count when the waiter last tried.
	gen        uint64
	prev, next *Waiter
	queued     bool
	// woken: popped by a release, not yet back in Acquire.
	woken bool
	// Since is when the waiter first queued, for the engine's timeout.
	Since time.Time
}

// Queue is the bounded FIFO of requests waiting for a target below its
// cap. A short mutex guards the list; nothing blocks while holding it, so
// an event loop may enqueue and cancel. Wake-ups are not lost: a release
// bumps gen before it looks for waiters, and a waiter counts itself in
// before it checks gen (both sequentially consistent atomics), so either
// the release sees the waiter or the waiter sees the release.
type Queue struct {
	size    int
	timeout time.Duration
	gen     atomic.Uint64
	n       atomic.Int64
	mu      sync.Mutex
	head    *Waiter
	tail    *Waiter
}

func newQueue(size int, timeout time.Duration) *Queue {
	if size < 0 {
		size = 0
	} else if size == 0 {
		size = DefaultQueueSize
	}
	return &Queue{size: size, timeout: timeout}
}

// Timeout is how long a request may wait.
func (q *Queue) Timeout() time.Duration { return q.timeout }

// Len is the number of waiters.
func (q *Queue) Len() int { return int(q.n.Load()) }

// enqueue adds w unless a release happened since w.gen (then the caller
// tries again at once) or the queue is full. A waiter that was woken
// goes back to the front: it keeps its turn.
func (q *Queue) enqueue(w *Waiter) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if w.queued {
		return ErrQueued
	}
	if int(q.n.Load()) >= q.size && !w.woken {
		return ErrQueueFull
	}
	q.n.Add(1)
	if q.gen.Load() != w.gen {
		q.n.Add(-1)
		return nil // try again
	}
	if w.woken {
		w.next, w.prev = q.head, nil
		if q.head != nil {
			q.head.prev = w
		} else {
			q.tail = w
		}
		q.head = w
	} else {
		w.prev, w.next = q.tail, nil
		if q.tail != nil {
			q.tail.next = w
		} else {
			q.head = w
		}
		q.tail = w
	}
	w.queued, w.woken = true, false
	return ErrQueued
}

// unlink removes w; q.mu held.
func (q *Queue) unlink(w *Waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	q.n.Add(-1)
}

// released is called after a slot was freed: it wakes the first waiter.
func (q *Queue) released() {
	q.gen.Add(1)
	if q.n.Load() == 0 {
		return
	}
	q.mu.Lock()
	w := q.head
	if w != nil {
		q.unlink(w)
		w.woken = true
	}
	q.mu.Unlock()
	if w != nil && w.Notify != nil {
		w.Notify()
	}
}

// closeAll wakes every waiter (the pool is going away); their Acquire
// then selects from the pool or fails as it now would.
func (q *Queue) closeAll() {
	q.mu.Lock()
	var ws []*Waiter
	for q.head != nil {
		w := q.head
		q.unlink(w)
		w.woken = true
		ws = append(ws, w)
	}
	q.mu.Unlock()
	for _, w := range ws {
		if w.Notify != nil {
			w.Notify()
		}
	}
}

// Acquire selects a target like Select; when every target is at its cap
// it queues w and returns ErrQueued (the engine waits for w.Notify, then
// calls Acquire again), or ErrQueueFull. It never blocks, so an event
// loop may call it. The engine enforces QueueTimeout itself (from
// w.Since) and then calls Cancel.
func (p *Pool) Acquire(key []byte, ex *Exclude, w *Waiter) (*Target, error) {
	if p.queue == nil {
		return p.Select(key, ex)
	}
	for range selectRounds {
		w.gen = p.queue.gen.Load()
		t, err := p.Select(key, ex)
		if err != ErrFull {
			if w.queued {
				p.Cancel(w)
			}
			w.woken, w.Since = false, time.Time{}
			return t, err
		}
		if w.Since.IsZero() {
			w.Since = time.Now()
		}
		if err := p.queue.enqueue(w); err != nil {
			return nil, err
		}
	}
	return nil, ErrFull
}

// Cancel takes w out of the queue (timeout, client gone). If a release
// had already woken w, the wake passes to the next waiter, so no slot is
// left unclaimed.
func (p *Pool) Cancel(w *Waiter) {
	if p.queue == nil {
		return
	}
	q := p.queue
	q.mu.Lock()
	woken := w.woken
	if w.queued {
		q.unlink(w)
	}
	w.woken = false
	q.mu.Unlock()
	if woken {
		q.released()
	}
	w.Since = time.Time{}
}

// AcquireWait is Acquire for goroutine engines: it blocks until a target
// is selected, the queue timeout passes (ErrQueueTimeout) or done is
// closed (ErrQueueTimeout as well; the caller knows why).
func (p *Pool) AcquireWait(key []byte, ex *Exclude, done <-chan struct{}) (*Target, error) {
	if t, err := p.Select(key, ex); err != ErrFull || p.queue == nil {
		return t, err
	}
	ch := make(chan struct{}, 1)
	w := &Waiter{Notify: func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		t, err := p.Acquire(key, ex, w)
		if err != ErrQueued {
			return t, err
		}
		if timer == nil {
			timer = time.NewTimer(p.queue.timeout)
		}
		select {
		case <-ch:
		case <-timer.C:
			p.Cancel(w)
			return nil, ErrQueueTimeout
		case <-done:
			p.Cancel(w)
			return nil, ErrQueueTimeout
		}
	}
}

// Queue is the pool's admission queue, nil without max_conns_per_target.
func (p *Pool) Queue() *Queue { return p.queue }
