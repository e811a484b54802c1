package accesslog

import (
	"time"
)

// run is the writer goroutine: it writes full buffers as they come, the
// shards' partial buffers every flushInterval, reopens the file when
// asked, and flushes everything when stopped.
func (l *Log) run() {
	defer close(l.done)
	t := time.NewTicker(writeTick)
	defer t.Stop()
	lastFlush := time.Now()
	for {
		select {
		case <-l.wake:
			l.drainFull()
		case now := <-t.C:
			l.drainFull()
			if now.Sub(lastFlush) >= flushInterval {
				l.flushShards()
				lastFlush = now
			}
		case <-l.stop:
			l.drainFull()
			l.flushShards()
			l.drainFull()
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

// write writes b whole (one Write call: os.File writes all of it or
// fails), between reopens, and returns b to the free list.
func (l *Log) write(f filled) {
	if len(f.b) > 0 {
		if _, err := l.w.Write(f.b); err != nil {
			l.failed.Add(1)
			l.dropped.Add(uint64(f.lines))
		} else {
			l.written.Add(uint64(f.lines))
		}
	}
	l.free <- f.b[:0]
}

func (l *Log) drainFull() {
	for {
		select {
		case f := <-l.full:
			l.write(f)
		default:
			return
		}
	}
}

// flushShards takes each shard's pending lines (swapping in a free buffer)
// and writes them. The full buffers queued before the swap are written
// first (a shard hands them over under the lock the swap takes), so a
// shard's lines keep their order.
func (l *Log) flushShards() {
	for i := range l.shards {
		if len(l.free) == 0 {
			l.drainFull() // gives buffers back to the free list
		}
		s := &l.shards[i].Shard
		s.mu.Lock()
		if len(s.buf) == 0 {
			s.mu.Unlock()
			continue
		}
		var nb []byte
		select {
		case nb = <-l.free:
		default:
			// Every spare buffer is queued for the sink: write those
			// first, then this shard's next time.
			s.mu.Unlock()
			continue
		}
		f := filled{s.buf, s.lines}
		s.buf, s.lines = nb, 0
		s.mu.Unlock()
		l.drainFull()
		l.write(f)
	}
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
