package wrkout

import (
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// wrkCorrect is wrk 4.1's stats_correct and stats_percentile on a dense
// histogram (index = µs), transcribed from their behaviour: counts are
// added below n while above one interval, the total grows, the minimum
// does not move.
type wrkStats struct {
	data       []int64
	count      int64
	minV, maxV int64
}

func newWrkStats(samples map[int64]int64) *wrkStats {
	s := &wrkStats{minV: math.MaxInt64}
	for v, c := range samples {
		for int64(len(s.data)) <= v {
			s.data = append(s.data, 0)
		}
		s.data[v] += c
		s.count += c
		s.minV, s.maxV = min(s.minV, v), max(s.maxV, v)
	}
	return s
}

func (s *wrkStats) correct(expected int64) {
	for n := expected * 2; n <= s.maxV; n++ {
		c := s.data[n]
		for m := n - expected; c > 0 && m > expected; m -= expected {
			s.data[m] += c
			s.count += c
		}
	}
}

func (s *wrkStats) percentile(p float64) int64 {
	rank := int64(math.Round(p/100*float64(s.count) + 0.5))
	var total int64
	for i := s.minV; i <= s.maxV; i++ {
		total += s.data[i]
		if total >= rank {
			return i
		}
	}
	return 0
}

// dump is what DoneScript prints: the non-empty buckets within [min, max].
func (s *wrkStats) dump() []Bucket {
	var h []Bucket
	for i := s.minV; i <= s.maxV; i++ {
		if s.data[i] > 0 {
			h = append(h, Bucket{i, s.data[i]})
		}
	}
	return h
}

// The pipelined origin's case: batches take 300-2,000 µs while the
// correction interval is 61 µs, so wrk adds counts below the minimum, loses
// them, and prints 0 for p99 (and p90). Uncorrect recovers the recorded
// latencies exactly.
func TestUncorrectRecoversRecorded(t *testing.T) {
	samples := map[int64]int64{}
	for v := int64(300); v <= 2000; v += 7 {
		samples[v] = 1 + v%5
	}
	samples[2000] += 3
	const interval = 61
	s := newWrkStats(samples)
	s.correct(interval)
	if got := s.percentile(99); got != 0 {
		t.Fatalf("wrk's percentile on this histogram = %d, want the 0 that the report showed (test setup)", got)
	}
	got, err := Uncorrect(s.dump(), interval)
	if err != nil {
		t.Fatal(err)
	}
	want := newWrkStats(samples).dump()
	if !slices.Equal(got, want) {
		t.Fatalf("Uncorrect = %v…, want the recorded %v…", got[:5], want[:5])
	}
	p99, ok := HistPercentile(got, 99)
	if !ok || p99 != time.Duration(newWrkStats(samples).percentile(99))*time.Microsecond || p99 < 1900*time.Microsecond {
		t.Errorf("p99 = %v, %v", p99, ok)
	}
	// 161 µs ≥ 2 intervals adds its 5 at 100 µs.
	if h, err := Uncorrect([]Bucket{{100, 6}, {161, 5}}, interval); err != nil || !slices.Equal(h, []Bucket{{100, 1}, {161, 5}}) {
		t.Errorf("Uncorrect = %v, %v", h, err)
	}
	if _, err := Uncorrect([]Bucket{{100, 1}, {161, 5}}, interval); err == nil {
		t.Error("a dump with fewer counts one interval below than above accepted")
	}
}

// Parse drops the zeros wrk printed instead of reporting 0 ns, and reads the
// lines of DoneScript; UseHistogram then gives real percentiles.
func TestParseZeroPercentilesAndDump(t *testing.T) {
	out := `Running 10s test @ http://127.0.0.1:1/
  1 threads and 64 connections
  Latency Distribution
     50%  378.00us
     75%  529.00us
     90%    0.00us
     99%    0.00us
  10481216 requests in 10.00s, 1.25GB read
Requests/sec: 1047819.93
Transfer/sec:    128.00MB
benchrun-wrk duration=10000000 requests=10481216 cpu=9.870000
benchrun-hist 300:4 350:10 400:3 2100:1
`
	r, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Latency[99]; ok || !slices.Equal(r.ZeroPercentiles, []float64{90, 99}) {
		t.Errorf("latency %v, zero percentiles %v", r.Latency, r.ZeroPercentiles)
	}
	if r.RunMicros != 10000000 || r.RunRequests != 10481216 || r.WrkCPU != 9870*time.Millisecond || len(r.Hist) != 4 {
		t.Errorf("run line: %+v", r)
	}
	// Interval 10 s / (10481216/64) = 61 µs: 2100 adds to 2039, 1978, ...
	// none of which are dumped buckets here, so nothing is subtracted.
	ok, err := r.UseHistogram(64, []float64{50, 75, 90, 99})
	if !ok || err != nil {
		t.Fatalf("UseHistogram = %v, %v", ok, err)
	}
	if r.Latency[50] != 350*time.Microsecond || r.Latency[99] != 2100*time.Microsecond || !r.LatencyFromHist {
		t.Errorf("percentiles from the histogram = %v", r.Latency)
	}
	if _, err := Parse(strings.Replace(out, "300:4", "300:x", 1)); err == nil {
		t.Error("bad histogram accepted")
	}
}

// testdata/pipelined-hist.txt is a real pipelined run (16 deep) against the
// fasthttp peer with the dump script; its histogram has ~45k buckets on one
// line, beyond bufio's default line limit.
func TestParseRealDump(t *testing.T) {
	b, err := os.ReadFile("testdata/pipelined-hist.txt")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Hist) < 1000 || r.RunRequests != r.Requests {
		t.Fatalf("%d buckets, run requests %d vs %d", len(r.Hist), r.RunRequests, r.Requests)
	}
	if ok, err := r.UseHistogram(64, []float64{50, 75, 90, 99}); !ok || err != nil {
		t.Fatalf("UseHistogram = %v, %v", ok, err)
	}
	prev := time.Duration(0)
	for _, p := range []float64{50, 75, 90, 99} {
		d := r.Latency[p]
		if d <= prev {
			t.Errorf("p%v = %v after %v", p, d, prev)
		}
		prev = d
	}
	lo := time.Duration(r.Hist[0].Micros) * time.Microsecond
	hi := time.Duration(r.Hist[len(r.Hist)-1].Micros) * time.Microsecond
	if r.Latency[50] < lo || r.Latency[99] > hi {
		t.Errorf("percentiles %v outside the histogram's %v–%v", r.Latency, lo, hi)
	}
}
