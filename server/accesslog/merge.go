package accesslog

import (
	"container/heap"
	"encoding/binary"
)

// A shard buffer holds records, not bare lines: each line is preceded by
// its time (Unix nanoseconds, the line's sort key) and its length, so that
// the writer merges the buffers of every shard by time without parsing a
// line (the combined format's time has only seconds).
const (
	recTime   = 8 // uint64 Unix nanoseconds, little endian
	recLen    = 4 // uint32 length of the line that follows
	recHeader = recTime + recLen
)

// beginRecord reserves a record's header at the end of b; endRecord fills
// it once the line (everything after the header) has been appended.
func beginRecord(b []byte) ([]byte, int) {
	n := len(b)
	return append(b, make([]byte, recHeader)...), n
}

func endRecord(b []byte, at int, t int64) {
	binary.LittleEndian.PutUint64(b[at:], uint64(t))
	binary.LittleEndian.PutUint32(b[at+recTime:], uint32(len(b)-at-recHeader))
}

// run is a sequence of records in time order (a shard buffer, a full
// buffer handed over, or the carry) with a cursor on its next record.
type run struct {
	b   []byte
	off int
	t   int64 // time of the record at off
	// free: b goes back to the free list once its records are out.
	free bool
}

func (r *run) load() bool {
	if r.off+recHeader > len(r.b) {
		return false
	}
	r.t = int64(binary.LittleEndian.Uint64(r.b[r.off:]))
	return true
}

// next returns the record at the cursor (header included) and advances.
func (r *run) next() []byte {
	n := int(binary.LittleEndian.Uint32(r.b[r.off+recTime:]))
	rec := r.b[r.off : r.off+recHeader+n]
	r.off += recHeader + n
	return rec
}

// runHeap orders runs by the time of their next record: a k-way merge
// costs O(log k) per line, k being the shards plus the buffers handed
// over in a round.
type runHeap []*run

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return h[i].t < h[j].t }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*run)) }
func (h *runHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// merger is the writer's state for merging; only the writer goroutine
// uses it, and its slices are reused from round to round.
type merger struct {
	runs  []run
	heap  runHeap
	out   []byte // lines to write, whole
	lines int    // lines in out
	// carry holds the records at or after a round's cutoff, in order:
	// they go out in the next round (next is the one being filled).
	carry, next []byte
}

// merge emits, in time order, the records of m.runs older than cutoff
// through emit, and keeps the others in the carry. A run's buffer marked
// free goes to release as soon as its last record is out (copied to the
// output or the carry), so that a busy round gives buffers back to the
// shards while it goes on.
func (m *merger) merge(cutoff int64, emit func(line []byte), release func(b []byte)) {
	m.runs = append(m.runs, run{b: m.carry})
	m.heap = m.heap[:0]
	for i := range m.runs {
		if m.runs[i].load() {
			m.heap = append(m.heap, &m.runs[i])
		} else if m.runs[i].free {
			release(m.runs[i].b)
		}
	}
	heap.Init(&m.heap)
	m.next = m.next[:0]
	for len(m.heap) > 0 {
		r := m.heap[0]
		t, rec := r.t, r.next()
		if t >= cutoff {
			m.next = append(m.next, rec...)
		} else {
			emit(rec[recHeader:])
		}
		switch {
		case !r.load():
			heap.Pop(&m.heap)
			if r.free {
				release(r.b)
			}
		case m.rootHolds():
			// The run is still the oldest: no reordering. Runs of
			// one shard's full buffers follow each other in time,
			// so a busy round mostly takes this way.
		default:
			heap.Fix(&m.heap, 0)
		}
	}
	m.carry, m.next = m.next, m.carry
	clear(m.runs)
	m.runs = m.runs[:0]
}

// rootHolds reports whether the heap's root is no newer than its
// children, after its run advanced.
func (m *merger) rootHolds() bool {
	h := m.heap
	t := h[0].t
	return (len(h) < 2 || t <= h[1].t) && (len(h) < 3 || t <= h[2].t)
}
