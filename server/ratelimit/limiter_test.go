package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestBucket(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	l, err := New(Options{Rate: 2, Burst: 3, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	k := []byte("192.0.2.1")
	for i := range 3 {
		if ok, _ := l.Allow(k); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	ok, wait := l.Allow(k)
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("over the burst: ok %v wait %v, want refused for 500ms", ok, wait)
	}
	if ok, _ := l.Allow([]byte("192.0.2.2")); !ok {
		t.Fatal("another key shares the bucket")
	}
	c.t = c.t.Add(250 * time.Millisecond)
	if ok, wait := l.Allow(k); ok || wait != 250*time.Millisecond {
		t.Fatalf("half a token: ok %v wait %v", ok, wait)
	}
	c.t = c.t.Add(250 * time.Millisecond)
	if ok, _ := l.Allow(k); !ok {
		t.Fatal("a token accrued but was refused")
	}
	c.t = c.t.Add(time.Hour)
	for i := range 3 {
		if ok, _ := l.Allow(k); !ok {
			t.Fatalf("after an idle hour, request %d refused (bucket must refill to burst)", i)
		}
	}
	if ok, _ := l.Allow(k); ok {
		t.Fatal("bucket refilled beyond burst")
	}
}

// TestBounded: a flood of distinct keys never grows the table past its
// capacity, and the most recently used keys survive.
func TestBounded(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	l, _ := New(Options{Rate: 1, Burst: 1, MaxKeys: 256, Now: c.now})
	for i := range 100000 {
		l.Allow(fmt.Appendf(nil, "k%d", i))
	}
	if n := l.Len(); n > 256 {
		t.Fatalf("%d keys tracked, capacity 256", n)
	}
	// The last key is still tracked: its bucket is empty.
	if ok, _ := l.Allow([]byte("k99999")); ok {
		t.Fatal("most recent key was evicted")
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Options{Rate: 0, Burst: 1}); err != ErrRate {
		t.Error(err)
	}
	if _, err := New(Options{Rate: 1, Burst: 0}); err != ErrBurst {
		t.Error(err)
	}
}

func TestAllowAllocs(t *testing.T) {
	l, _ := New(Options{Rate: 1e9, Burst: 1 << 30})
	k := []byte("192.0.2.1")
	l.Allow(k)
	if n := testing.AllocsPerRun(1000, func() { l.Allow(k) }); n != 0 {
		t.Fatalf("%v allocations per warm Allow", n)
	}
}

// TestConcurrent: every goroutine's grants add up to the burst (no token
// is granted twice), under the race detector too.
func TestConcurrent(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	l, _ := New(Options{Rate: 1e-9, Burst: 500, Now: c.now})
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for range 200 {
				if ok, _ := l.Allow([]byte("shared")); ok {
					n++
				}
			}
			mu.Lock()
			granted += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	if granted != 500 {
		t.Fatalf("%d granted, burst 500", granted)
	}
}

func BenchmarkAllow(b *testing.B) {
	l, _ := New(Options{Rate: 1e9, Burst: 1 << 30})
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "198.51.100.%d", i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			l.Allow(keys[i&1023])
			i++
		}
	})
}

// TestMaxKeysExact: the table holds exactly MaxKeys keys once flooded,
// not a count rounded per shard (issue 27: 100 tracked 256, 1000 tracked
// 960).
func TestMaxKeysExact(t *testing.T) {
	c := &fakeClock{t: time.Unix(1000, 0)}
	for _, max := range []int{1, 3, 4, 100, 255, 256, 257, 1000, 16385} {
		l, err := New(Options{Rate: 1, Burst: 1, MaxKeys: max, Now: c.now})
		if err != nil {
			t.Fatal(err)
		}
		// 20 keys per slot fill every shard, whatever the hash seed
		// (a shard left short: odds below 2^-90).
		for i := range 20*max + 256 {
			l.Allow(fmt.Appendf(nil, "k%d", i))
		}
		if n := l.Len(); n != max {
			t.Errorf("MaxKeys %d: %d keys tracked", max, n)
		}
	}
}
