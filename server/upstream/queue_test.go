package upstream

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestCapAndQueue: the loop-style admission: Acquire never blocks; a full
// pool queues the waiter, a Done wakes it, and its next Acquire succeeds.
func TestCapAndQueue(t *testing.T) {
	p := newPool(t, Options{Targets: specs(2), MaxConnsPerTarget: 2, QueueSize: 1})
	var held []*Target
	for range 4 {
		x, err := p.Select(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, x)
	}
	for _, x := range p.Targets() {
		if x.InFlight() != 2 {
			t.Fatalf("%s: %d in flight", x.Address(), x.InFlight())
		}
	}
	if _, err := p.Select(nil, nil); !errors.Is(err, ErrFull) {
		t.Fatalf("select past the cap: %v", err)
	}
	var woken atomic.Int32
	w := &Waiter{Notify: func() { woken.Add(1) }}
	if _, err := p.Acquire(nil, nil, w); !errors.Is(err, ErrQueued) {
		t.Fatalf("acquire: %v", err)
	}
	w2 := &Waiter{}
	if _, err := p.Acquire(nil, nil, w2); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("second waiter with a queue of 1: %v", err)
	}
	p.Done(held[0], StatusResult(200))
	if woken.Load() != 1 || p.Queue().Len() != 0 {
		t.Fatalf("woken %d, queue %d", woken.Load(), p.Queue().Len())
	}
	x, err := p.Acquire(nil, nil, w)
	if err != nil || x != held[0] {
		t.Fatalf("after the wake: %v %v", x, err)
	}
	for _, x := range append(held[1:], x) {
		p.Done(x, StatusResult(200))
	}
}

// TestCancelPassesWake: a waiter woken and then canceled (its timeout
// fired at the same moment) hands the wake to the next waiter.
func TestCancelPassesWake(t *testing.T) {
	p := newPool(t, Options{Targets: specs(1), MaxConnsPerTarget: 1})
	x, _ := p.Select(nil, nil)
	var a, b atomic.Int32
	wa := &Waiter{Notify: func() { a.Add(1) }}
	wb := &Waiter{Notify: func() { b.Add(1) }}
	p.Acquire(nil, nil, wa)
	p.Acquire(nil, nil, wb)
	p.Done(x, StatusResult(200))
	if a.Load() != 1 || b.Load() != 0 {
		t.Fatalf("wakes %d %d", a.Load(), b.Load())
	}
	p.Cancel(wa)
	if b.Load() != 1 {
		t.Fatal("wake not passed on")
	}
	if y, err := p.Acquire(nil, nil, wb); err != nil {
		t.Fatal(err)
	} else {
		p.Done(y, StatusResult(200))
	}
}

func TestAcquireWaitTimeout(t *testing.T) {
	p := newPool(t, Options{Targets: specs(1), MaxConnsPerTarget: 1, QueueTimeout: 20 * time.Millisecond})
	x, _ := p.Select(nil, nil)
	start := time.Now()
	if _, err := p.AcquireWait(nil, nil, nil); !errors.Is(err, ErrQueueTimeout) {
		t.Fatalf("%v", err)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Error("timed out early")
	}
	if p.Queue().Len() != 0 {
		t.Error("timed-out waiter left in the queue")
	}
	p.Done(x, StatusResult(200))
}

// TestCapConcurrent: many goroutines through a capped pool: the cap holds
// at every moment, nobody waits forever, and the counts return to zero.
func TestCapConcurrent(t *testing.T) {
	const cap_ = 3
	p := newPool(t, Options{Targets: specs(2), MaxConnsPerTarget: cap_, QueueSize: 1000, QueueTimeout: 30 * time.Second, Balance: LeastConn})
	var over, served atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 200 {
				x, err := p.AcquireWait(nil, nil, nil)
				if err != nil {
					t.Error(err)
					return
				}
				if x.InFlight() > cap_ {
					over.Add(1)
				}
				served.Add(1)
				p.Done(x, StatusResult(200))
			}
		})
	}
	wg.Wait()
	if over.Load() != 0 {
		t.Errorf("cap exceeded %d times", over.Load())
	}
	if served.Load() != 32*200 || p.inflight() != 0 || p.Queue().Len() != 0 {
		t.Errorf("served %d, in flight %d, queued %d", served.Load(), p.inflight(), p.Queue().Len())
	}
}

// TestNoLostWakeup: a slot freed between a waiter's failed selection and
// its enqueue makes the enqueue say "try again" instead of queueing the
// waiter behind a release that has already happened (it would wait for
// the timeout with a slot free).
func TestNoLostWakeup(t *testing.T) {
	p := newPool(t, Options{Targets: specs(1), MaxConnsPerTarget: 1})
	x, _ := p.Select(nil, nil)
	w := &Waiter{}
	w.gen = p.queue.gen.Load()
	if _, err := p.Select(nil, nil); !errors.Is(err, ErrFull) {
		t.Fatal(err)
	}
	p.Done(x, StatusResult(200)) // the release, before the enqueue
	if err := p.queue.enqueue(w); err != nil {
		t.Fatalf("enqueue after a release: %v, want a retry", err)
	}
	if p.Queue().Len() != 0 {
		t.Fatal("waiter queued")
	}
}
