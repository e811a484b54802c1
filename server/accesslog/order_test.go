package accesslog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLinesInTimeOrder: lines written concurrently on several shards, in
// paced bursts that span many of the writer's rounds and fill buffers (so
// that full buffers are handed over too), reach the sink in time order.
// The writers stamp each entry with the time as the server's engines do;
// before, a quiet shard's lines were written shard by shard once a second
// and a full buffer as soon as it filled, so that 18 of 59 adjacent lines
// of one real run were out of order.
func TestLinesInTimeOrder(t *testing.T) {
	sink := &syncBuffer{}
	l, err := Open(Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	const workers, bursts, perBurst = 4, 30, 200
	onShards(l, workers, func(s *Shard, e *Entry) {
		for b := 0; b < bursts; b++ {
			for i := 0; i < perBurst; i++ {
				e.Time = time.Now()
				s.Write(e)
				if i%16 == 0 {
					runtime.Gosched()
				}
			}
			time.Sleep(time.Duration(b%3) * writeTick / 2)
		}
	})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var prev string
	n, inversions := 0, 0
	sc := bufio.NewScanner(bytes.NewReader(sink.b.Bytes()))
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		var line struct{ Time string }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || len(line.Time) != len("2006-01-02T15:04:05.000000Z") {
			t.Fatalf("line %d: %v %q", n, err, sc.Bytes())
		}
		// Fixed-width UTC times compare as strings.
		if line.Time < prev {
			inversions++
		}
		prev = line.Time
		n++
	}
	if n == 0 || uint64(n)+l.Dropped() != workers*bursts*perBurst {
		t.Fatalf("%d lines + %d dropped, want %d", n, l.Dropped(), workers*bursts*perBurst)
	}
	if inversions > 0 {
		t.Errorf("%d of %d lines come before the line above them", inversions, n)
	}
}

// onShards runs f on workers goroutines at once, each with a shard of l
// and an entry of its own, and waits for them.
func onShards(l *Log, workers int, f func(s *Shard, e *Entry)) {
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(l.Next(), sampleEntry())
		}()
	}
	wg.Wait()
}

// TestMergeCarry: the merge emits records older than the cutoff in time
// order across runs, and carries the others, in order, to the next round.
func TestMergeCarry(t *testing.T) {
	rec := func(b []byte, t int64, s string) []byte {
		b, at := beginRecord(b)
		b = append(b, s...)
		endRecord(b, at, t)
		return b
	}
	var m merger
	a := rec(rec(rec(nil, 1, "a1"), 4, "a4"), 9, "a9")
	b := rec(rec(nil, 2, "b2"), 7, "b7")
	m.runs = append(m.runs, run{b: a}, run{b: b}, run{b: nil})
	var got []string
	emit := func(line []byte) { got = append(got, string(line)) }
	m.merge(5, emit, nil)
	m.runs = append(m.runs, run{b: rec(nil, 8, "c8")})
	m.merge(100, emit, nil)
	want := []string{"a1", "b2", "a4", "b7", "c8", "a9"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %q, want %q", got, want)
		}
	}
	if len(m.carry) != 0 {
		t.Errorf("carry left: %d bytes", len(m.carry))
	}
}

// BenchmarkMerge is the writer's added cost per line: merging the records
// of 8 buffers of 200 lines into the output, their lines interleaved in
// time (quiet shards written in the same moments) or one buffer after
// another (a busy shard's full buffers).
func BenchmarkMerge(b *testing.B) {
	b.Run("interleaved", func(b *testing.B) { benchMerge(b, func(i, j int) int64 { return int64(j*8 + i) }) })
	b.Run("sequential", func(b *testing.B) { benchMerge(b, func(i, j int) int64 { return int64(i*200 + j) }) })
}

func benchMerge(b *testing.B, stamp func(buf, line int) int64) {
	const shards, per = 8, 200
	var tc timeCache
	e := sampleEntry()
	bufs := make([][]byte, shards)
	for i := range bufs {
		for j := 0; j < per; j++ {
			var at int
			bufs[i], at = beginRecord(bufs[i])
			bufs[i] = appendJSON(bufs[i], e, &tc)
			endRecord(bufs[i], at, stamp(i, j))
		}
	}
	var m merger
	out := make([]byte, 0, bufSize)
	emit := func(line []byte) {
		if len(out)+len(line) > cap(out) {
			out = out[:0]
		}
		out = append(out, line...)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(bufs[0]) * shards / (shards * per)))
	b.ResetTimer()
	for i := 0; i < b.N; i += shards * per {
		for _, buf := range bufs {
			m.runs = append(m.runs, run{b: buf})
		}
		m.merge(1<<62, emit, nil)
	}
}

// TestRoundFloor: a line that ended before a round began but is written
// after the round took its shard (a connection slow between the end of
// its response and its Write) is raised to the round's start, not put
// before lines already written out; a line written after the start but
// before the round took its shard is carried to the next round, in order.
func TestRoundFloor(t *testing.T) {
	sink := &syncBuffer{}
	l, err := open(Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	at := func(us int) time.Time { return base.Add(time.Duration(us) * time.Microsecond) }
	s1, s2, s3 := l.Next(), l.Next(), l.Next()
	write := func(s *Shard, us int) {
		e := sampleEntry()
		e.Time = at(us)
		s.Write(e)
	}
	write(s1, 100)
	write(s1, 190)
	write(s2, 250) // after the round's start (200), before it took s2
	l.round(at(200).UnixNano(), false)
	write(s3, 150) // ended before the round, written after it
	write(s1, 300)
	l.round(at(1000).UnixNano(), false)
	l.round(math.MaxInt64, true)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(sink.b.String()), "\n") {
		var e struct{ Time string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		got = append(got, e.Time)
	}
	want := []string{"2026-11-28T02:00:00.000100Z", "2026-11-28T02:00:00.000190Z",
		"2026-11-28T02:00:00.000200Z", "2026-11-28T02:00:00.000250Z", "2026-11-28T02:00:00.000300Z"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("times\n%q\nwant\n%q", got, want)
	}
}
