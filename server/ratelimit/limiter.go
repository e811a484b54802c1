package ratelimit

import (
	"errors"
	"hash/maphash"
	"math"
	"sync"
	"time"
)

// Errors of New.
var (
	ErrRate  = errors.New("ratelimit: rate must be positive")
	ErrBurst = errors.New("ratelimit: burst must be at least 1")
)

const (
	// shards splits the table so that loops and goroutines rarely wait
	// for each other's lock: 64 shards make a collision between two
	// CPUs' lookups a 1-in-64 event, for 64 mutexes of memory. A power
	// of two: a shard is picked with a mask.
	shards = 64
	// DefaultMaxKeys is the table's capacity when Options leaves it
	// zero: nginx's limit_req zone holds about 16,000 states per MiB;
	// here an entry is a little over 100 bytes, so this is ~2 MiB per
	// limited route.
	DefaultMaxKeys = 16384
	// minShardKeys keeps a shard useful with a small MaxKeys: under
	// shards*minShardKeys keys, fewer shards are used (New).
	minShardKeys = 4
	// nilIndex ends the LRU lists.
	nilIndex = -1
)

// Options configure a Limiter.
type Options struct {
	// Rate is the sustained rate in requests per second per key.
	Rate float64
	// Burst is the bucket's size: how many requests a key may make at
	// once after being idle.
	Burst int
	// MaxKeys bounds the number of keys tracked, exactly
	// (DefaultMaxKeys if 0): the shards' capacities add up to it. A
	// full shard evicts its own least recently used key, so the key
	// evicted is the least recently used of its shard, not of the
	// whole table.
	MaxKeys int
	// Now is the clock (time.Now if nil), for tests.
	Now func() time.Time
}

// Limiter is a token bucket per key in a bounded, sharded table. It is
// safe for concurrent use; Allow allocates nothing for a key already in
// the table.
type Limiter struct {
	rate  float64 // tokens per nanosecond
	burst float64
	seed  maphash.Seed
	now   func() time.Time
	base  time.Time
	// mask picks a shard from a key's hash: the shards in use are
	// sh[:mask+1].
	mask uint64
	sh   [shards]shard
}

type shard struct {
	mu    sync.Mutex
	index map[string]int32
	ents  []entry
	// head is the most recently used entry, tail the least; free is
	// how many of ents are unused (they are taken in order).
	head, tail int32
	_          [16]byte // pads a shard to 64 bytes: neighbours' locks do not share a cache line
}

type entry struct {
	key        string
	tokens     float64
	last       int64 // ns since Limiter.base
	prev, next int32
}

// New returns a Limiter for o.
func New(o Options) (*Limiter, error) {
	if !(o.Rate > 0) || math.IsInf(o.Rate, 0) {
		return nil, ErrRate
	}
	if o.Burst < 1 {
		return nil, ErrBurst
	}
	if o.MaxKeys <= 0 {
		o.MaxKeys = DefaultMaxKeys
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &Limiter{rate: o.Rate / 1e9, burst: float64(o.Burst), seed: maphash.MakeSeed(), now: o.Now}
	l.base = o.Now()
	// The shards in use (a power of two, each of at least minShardKeys
	// keys unless MaxKeys is smaller) share MaxKeys exactly: the first
	// MaxKeys%n take one key more.
	n := shards
	for n > 1 && o.MaxKeys < n*minShardKeys {
		n /= 2
	}
	l.mask = uint64(n - 1)
	per, extra := o.MaxKeys/n, o.MaxKeys%n
	for i := range n {
		c := per
		if i < extra {
			c++
		}
		s := &l.sh[i]
		s.index = make(map[string]int32, c)
		s.ents = make([]entry, 0, c)
		s.head, s.tail = nilIndex, nilIndex
	}
	return l, nil
}

// Allow takes a token from key's bucket. If there is none it returns
// false and how long until one accrues (Retry-After).
func (l *Limiter) Allow(key []byte) (ok bool, wait time.Duration) {
	now := int64(l.now().Sub(l.base))
	s := &l.sh[maphash.Bytes(l.seed, key)&l.mask]
	s.mu.Lock()
	i, found := s.index[string(key)] // no allocation for the lookup
	var e *entry
	if found {
		e = &s.ents[i]
		e.tokens = min(l.burst, e.tokens+float64(now-e.last)*l.rate)
		e.last = now
		s.touch(i)
	} else {
		i = s.insert(string(key)) // a new key: its string is allocated
		e = &s.ents[i]
		e.tokens, e.last = l.burst, now
	}
	if e.tokens >= 1 {
		e.tokens--
		s.mu.Unlock()
		return true, 0
	}
	need := (1 - e.tokens) / l.rate
	s.mu.Unlock()
	return false, time.Duration(math.Ceil(need))
}

// Len is the number of keys tracked.
func (l *Limiter) Len() int {
	n := 0
	for i := range l.sh {
		s := &l.sh[i]
		s.mu.Lock()
		n += len(s.index)
		s.mu.Unlock()
	}
	return n
}

// touch moves entry i to the head of the LRU list.
func (s *shard) touch(i int32) {
	if s.head == i {
		return
	}
	s.unlink(i)
	s.pushHead(i)
}

func (s *shard) unlink(i int32) {
	e := &s.ents[i]
	if e.prev != nilIndex {
		s.ents[e.prev].next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nilIndex {
		s.ents[e.next].prev = e.prev
	} else {
		s.tail = e.prev
	}
}

func (s *shard) pushHead(i int32) {
	e := &s.ents[i]
	e.prev, e.next = nilIndex, s.head
	if s.head != nilIndex {
		s.ents[s.head].prev = i
	}
	s.head = i
	if s.tail == nilIndex {
		s.tail = i
	}
}

// insert adds key, evicting the least recently used entry when the shard
// is full, and returns its index.
func (s *shard) insert(key string) int32 {
	var i int32
	if len(s.ents) < cap(s.ents) {
		i = int32(len(s.ents))
		s.ents = s.ents[:i+1]
	} else {
		i = s.tail
		s.unlink(i)
		delete(s.index, s.ents[i].key)
	}
	s.ents[i].key = key
	s.index[key] = i
	s.pushHead(i)
	return i
}
