package accesslog

import (
	"errors"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Sizes of the buffering.
const (
	// bufSize is one shard buffer: big enough to hold a couple of hundred
	// typical lines (about 300 bytes each), so the writer makes one
	// write per couple of hundred requests, and any single line (maxLine).
	bufSize = 64 << 10
	// shardsPerCPU: connections spread over twice as many shards as
	// CPUs, so two busy connections rarely share one.
	shardsPerCPU = 2
	// spareBuffers is how many buffers beyond two per shard wait in the
	// free list: the bound on what a stalled sink can hold back (2 MiB,
	// about 7,000 lines: a few tenths of a second at full load), beyond
	// which lines are dropped. The second buffer per shard is what a
	// round swaps in for the shard's, so that every round can take every
	// shard's lines (writer.go: that is what keeps the lines in order).
	spareBuffers = 32
	// writeTick is how often the writer writes a round: every shard's
	// lines and the full buffers queued, merged by time. At 50,000
	// lines/s of 400 bytes that is 3 full buffers a tick, far below the
	// spare buffers, so the queue never runs dry between ticks; a queue
	// that does (a burst) wakes the writer at once (lowFree). It also
	// bounds how long a line waits in a quiet shard.
	writeTick = 10 * time.Millisecond
	// lowFree is the free-list length below which a hand-over wakes the
	// writer instead of waiting for its tick.
	lowFree = spareBuffers / 4
	// closeTimeout bounds Close's wait for a stalled sink.
	closeTimeout = 5 * time.Second
	// cacheLine pads shards apart.
	cacheLine = 64
)

var (
	ErrClosed       = errors.New("accesslog: closed")
	ErrCloseTimeout = errors.New("accesslog: sink stalled; unwritten lines lost at close")
	errBadSample    = errors.New("accesslog: sample must be in (0, 1]")
)

// Options configure a Log.
type Options struct {
	// Path is "stdout", "stderr" or a file (appended to, created 0644).
	Path   string
	Format Format
	// Sample is the share of requests logged, in (0, 1]; 0 means 1.
	// Sampling is deterministic: every 1/Sample-th request per shard.
	Sample float64
	// Writer, if set, replaces Path (tests).
	Writer io.Writer
}

// Log is an access log. Its methods are safe for concurrent use.
type Log struct {
	format Format
	sample float64
	shards []paddedShard
	next   atomic.Uint32

	free chan []byte // empty buffers
	full chan []byte // full buffers for the writer
	m    merger      // the writer's (merge.go)
	wake chan struct{}
	stop chan struct{}
	done chan struct{}

	reopenWanted atomic.Bool
	path         string
	file         *os.File // nil for stdout, stderr or Writer
	w            io.Writer

	dropped atomic.Uint64
	written atomic.Uint64 // lines handed to the sink
	failed  atomic.Uint64 // sink write errors
	closed  atomic.Bool
}

type paddedShard struct {
	Shard
	_ [cacheLine]byte
}

// Shard is where the lines of the connections given it go. Its Write is
// safe for concurrent use (a mutex taken by its connections and by the
// writer's rounds).
type Shard struct {
	mu  sync.Mutex
	log *Log
	buf []byte
	tc  timeCache
	acc float64 // sampling accumulator
	// floor is the least time (Unix nanoseconds) the next line may
	// have: the time of the shard's last line, or the start of the
	// writer's last round if later.
	floor int64
}

// Open starts a Log and its writer goroutine.
func Open(o Options) (*Log, error) {
	l, err := open(o)
	if err == nil {
		go l.run()
	}
	return l, err
}

// open is Open without the writer goroutine (tests run its rounds).
func open(o Options) (*Log, error) {
	if o.Sample == 0 {
		o.Sample = 1
	}
	if !(o.Sample > 0 && o.Sample <= 1) {
		return nil, errBadSample
	}
	l := &Log{format: o.Format, sample: o.Sample, path: o.Path,
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	switch {
	case o.Writer != nil:
		l.w = o.Writer
	case o.Path == "stdout":
		l.w = os.Stdout
	case o.Path == "stderr":
		l.w = os.Stderr
	default:
		f, err := openFile(o.Path)
		if err != nil {
			return nil, err
		}
		l.file, l.w = f, f
	}
	n := 1
	for n < shardsPerCPU*runtime.GOMAXPROCS(0) {
		n *= 2
	}
	l.shards = make([]paddedShard, n)
	spare := n + spareBuffers
	total := n + spare
	l.free = make(chan []byte, total)
	// full holds every buffer at once if need be, so a hand-over never
	// blocks.
	l.full = make(chan []byte, total)
	l.m.out = make([]byte, 0, bufSize)
	for i := range l.shards {
		s := &l.shards[i].Shard
		s.log = l
		s.buf = make([]byte, 0, bufSize)
	}
	for i := 0; i < spare; i++ {
		l.free <- make([]byte, 0, bufSize)
	}
	return l, nil
}

func openFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
}

// Next gives a new connection its shard, in turn (one atomic add per
// connection, none per request).
func (l *Log) Next() *Shard {
	return &l.shards[int(l.next.Add(1))&(len(l.shards)-1)].Shard
}

// WantsReferer reports whether the format writes Entry.Referer (callers
// skip looking it up otherwise).
func (s *Shard) WantsReferer() bool { return s.log.format == Combined }

// Dropped is the number of lines dropped because the sink stalled.
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Lines is the number of lines handed to the sink.
func (l *Log) Lines() uint64 { return l.written.Load() }

// WriteErrors is the number of failed writes to the sink (their lines
// are lost and counted in Dropped too).
func (l *Log) WriteErrors() uint64 { return l.failed.Load() }

// Reopen asks the writer to reopen the file (after logrotate renamed it):
// lines written from then on go to a new file at the same path. It does
// not wait: a stalled sink must not block the caller (a signal handler).
func (l *Log) Reopen() {
	l.reopenWanted.Store(true)
	l.poke()
}

func (l *Log) poke() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Write formats e into the shard's buffer (raising e.Time to the shard's
// floor, see Entry.Time). It never blocks on the sink: if the buffer is
// full and no free buffer is left, the line is dropped and counted.
func (s *Shard) Write(e *Entry) {
	l := s.log
	s.mu.Lock()
	if l.sample < 1 {
		s.acc += l.sample
		if s.acc < 1 {
			s.mu.Unlock()
			return
		}
		s.acc--
	}
	// The line is formatted straight into the buffer when its bound fits
	// (the bound is a true upper bound, so append never reallocates).
	if cap(s.buf)-len(s.buf) < recHeader+lineBound(e) {
		select {
		case nb := <-l.free:
			// Queued, not signalled: the writer drains the queue on
			// its tick (writeTick), and is woken only when free
			// buffers run low, so a hand-over costs no thread wakeup.
			// A shard a round left without a buffer has none to
			// hand over.
			if s.buf != nil {
				l.full <- s.buf
			}
			s.buf = nb
			if len(l.free) < lowFree {
				l.poke()
			}
		default:
			s.mu.Unlock()
			l.dropped.Add(1)
			return
		}
	}
	// The line's time may not go below the shard's floor (Entry.Time):
	// a shard's lines are then in time order, and a line older than a
	// writer's round is in the buffers that round takes (writer.go),
	// which keeps a file's lines in order.
	t := e.Time.UnixNano()
	if t < s.floor {
		t = s.floor
		e.Time = time.Unix(0, t)
	}
	s.floor = t
	var at int
	s.buf, at = beginRecord(s.buf)
	if l.format == Combined {
		s.buf = appendCombined(s.buf, e, &s.tc)
	} else {
		s.buf = appendJSON(s.buf, e, &s.tc)
	}
	endRecord(s.buf, at, t)
	s.mu.Unlock()
}

// Close flushes every shard, waits for the writer (at most closeTimeout:
// a stalled sink loses what it holds) and closes the file.
func (l *Log) Close() error {
	if l.closed.Swap(true) {
		return ErrClosed
	}
	close(l.stop)
	select {
	case <-l.done:
		return nil
	case <-time.After(closeTimeout):
		return ErrCloseTimeout
	}
}
