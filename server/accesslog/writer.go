package accesslog

import (
	"math"
	"time"
)

// run is the writer goroutine: every writeTick (or at once when free
// buffers run low, or when stopped) it writes a round, and reopens the
// file between rounds when asked.
func (l *Log) run() {
	defer close(l.done)
	t := time.NewTicker(writeTick)
	defer t.Stop()
	for {
		select {
		case <-l.wake:
			l.round(time.Now().UnixNano(), false)
		case <-t.C:
			l.round(time.Now().UnixNano(), false)
		case <-l.stop:
			l.round(math.MaxInt64, true)
			if l.file != nil {
				l.file.Close()
			}
			return
		}
		if l.reopenWanted.Swap(false) {
			l.reopen()
		}
	}
}

// round writes, in time order, every line older than cutoff (the round's
// start), and (final) everything else too. Under each shard's lock it
// raises the shard's floor to the cutoff, so that a line the shard takes
// after this round is no older than the cutoff (Shard.Write), and takes
// the shard's buffer; every line older than the cutoff is then in a
// buffer the round takes: the swapped ones, and the full buffers handed
// over before each swap, which it takes after the swaps. It merges them
// all (each is in time order already) with the lines the last round
// carried; the lines at or after the cutoff (written between the round's
// start and a swap) are carried to the next round, whose lines are all
// newer than this round's. So a file's lines are in time order, across
// rounds too.
func (l *Log) round(cutoff int64, final bool) {
	m := &l.m
	for i := range l.shards {
		s := &l.shards[i].Shard
		s.mu.Lock()
		if !final && s.floor < cutoff {
			s.floor = cutoff
		}
		if len(s.buf) == 0 {
			s.mu.Unlock()
			continue
		}
		// Without a free buffer to swap in (every spare is queued for
		// a sink that stalls or has fallen behind), the shard is left
		// none: its lines are dropped until one comes back, as they
		// would be once its buffer filled, and this round still takes
		// every line written before it.
		var nb []byte
		select {
		case nb = <-l.free:
		default:
		}
		b := s.buf
		s.buf = nb
		s.mu.Unlock()
		m.runs = append(m.runs, run{b: b, free: true})
	}
	for drained := false; !drained; {
		select {
		case b := <-l.full:
			m.runs = append(m.runs, run{b: b, free: true})
		default:
			drained = true
		}
	}
	m.merge(cutoff, l.emit, l.release)
	l.flushOut()
}

// release gives a buffer whose lines are out back to the free list (it
// has room: the list holds every buffer).
func (l *Log) release(b []byte) { l.free <- b[:0] }

// emit adds a line to the output, writing the output first when the line
// would not fit.
func (l *Log) emit(line []byte) {
	m := &l.m
	if len(m.out)+len(line) > cap(m.out) {
		l.flushOut()
	}
	m.out = append(m.out, line...)
	m.lines++
}

// flushOut writes the output whole (one Write call: os.File writes all
// of it or fails), so a reopen never splits a line.
func (l *Log) flushOut() {
	m := &l.m
	if len(m.out) == 0 {
		return
	}
	if _, err := l.w.Write(m.out); err != nil {
		l.failed.Add(1)
		l.dropped.Add(uint64(m.lines))
	} else {
		l.written.Add(uint64(m.lines))
	}
	m.out, m.lines = m.out[:0], 0
}

// reopen opens the path again (logrotate renamed the old file) and closes
// the old file. If the open fails, the old file is kept.
func (l *Log) reopen() {
	if l.file == nil {
		return
	}
	f, err := openFile(l.path)
	if err != nil {
		l.failed.Add(1)
		return
	}
	old := l.file
	l.file, l.w = f, f
	old.Close()
}
