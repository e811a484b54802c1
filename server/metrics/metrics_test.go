package metrics

import (
	"sync"
	"testing"
	"time"
	"unsafe"
)

func TestIndexes(t *testing.T) {
	for m, want := range map[string]int{"GET": MethodGet, "PATCH": MethodPatch, "get": MethodOther, "BREW": MethodOther, "": MethodOther} {
		if got := MethodIndex([]byte(m)); got != want {
			t.Errorf("MethodIndex(%q) = %d, want %d", m, got, want)
		}
	}
	for s, want := range map[int]int{200: 2, 101: 1, 599: 5, 600: 0, 99: 0, 0: 0, -1: 0} {
		if got := ClassIndex(s); got != want {
			t.Errorf("ClassIndex(%d) = %d, want %d", s, got, want)
		}
	}
	if ParseStatusIndex(431) != 4 || ParseStatusIndex(418) != len(ParseStatuses) {
		t.Errorf("ParseStatusIndex: 431 -> %d, 418 -> %d", ParseStatusIndex(431), ParseStatusIndex(418))
	}
}

// TestMergeShards counts from many goroutines on every shard (and beyond
// the shard count: indexes wrap) and checks the sums and the cumulative
// buckets.
func TestMergeShards(t *testing.T) {
	s := NewSet()
	r := s.Route("api")
	l := s.Listener("127.0.0.1:80")
	if s.Route("api") != r || s.Listener("127.0.0.1:80") != l {
		t.Fatal("Route or Listener by the same name gave another block")
	}
	const workers, each = 8, 1000
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			shard := s.Shard() + w*97 // any int is a valid shard index
			l.Opened(shard)
			for i := range each {
				d := 50 * time.Microsecond // first bucket
				if i%2 == 1 {
					d = 20 * time.Second // +Inf
				}
				r.Observe(shard, MethodGet, 200+i%2*300, d, 10, 100)
			}
			l.ParseError(shard, 431)
			l.Closed(shard)
		}()
	}
	wg.Wait()
	tot := r.Totals()
	if n := tot.Requests[MethodGet][2]; n != workers*each/2 {
		t.Errorf("GET 2xx = %d, want %d", n, workers*each/2)
	}
	if n := tot.Requests[MethodGet][5]; n != workers*each/2 {
		t.Errorf("GET 5xx = %d, want %d", n, workers*each/2)
	}
	if tot.Buckets[0] != workers*each/2 || tot.Buckets[len(tot.Buckets)-2] != workers*each/2 || tot.Buckets[len(tot.Buckets)-1] != workers*each {
		t.Errorf("buckets not cumulative as expected: %v", tot.Buckets)
	}
	if tot.BytesIn != 10*workers*each || tot.BytesOut != 100*workers*each {
		t.Errorf("bytes in/out = %d/%d", tot.BytesIn, tot.BytesOut)
	}
	c := l.Totals()
	if c.Opened != workers || c.Active() != 0 || c.ParseErrors[ParseStatusIndex(431)] != workers {
		t.Errorf("conns = %+v", c)
	}
	names := []string{}
	for _, r := range s.Routes() {
		names = append(names, r.Name())
	}
	if len(names) != 2 || names[0] != UnmatchedRoute || names[1] != "api" {
		t.Errorf("routes = %q", names)
	}
}

// TestNilSafe: with metrics off the hooks take a nil Set and Route.
func TestNilSafe(t *testing.T) {
	var s *Set
	l := s.Listener("x")
	l.Opened(1)
	l.Closed(1)
	l.Refused(1, RefusedPerIP)
	l.ParseError(1, 400)
	var r *Route
	r.Observe(1, MethodGet, 200, time.Millisecond, 1, 1)
}

func TestShardSize(t *testing.T) {
	if sz := int(unsafe.Sizeof(routeShard{})); sz%cacheLine != 0 {
		t.Errorf("routeShard is %d bytes, not whole cache lines", sz)
	}
	if sz := int(unsafe.Sizeof(listenerShard{})); sz%cacheLine != 0 {
		t.Errorf("listenerShard is %d bytes, not whole cache lines", sz)
	}
}

func BenchmarkObserve(b *testing.B) {
	s := NewSet()
	r := s.Route("api")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		shard := s.Shard()
		for pb.Next() {
			r.Observe(shard, MethodGet, 200, time.Millisecond, 100, 1000)
		}
	})
}
