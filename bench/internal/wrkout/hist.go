package wrkout

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Lines that benchrun's wrk script (DoneScript) prints after wrk's own
// summary.
const (
	// RunLinePrefix starts "benchrun-wrk duration=<µs> requests=<n>
	// cpu=<s>": the run as wrk's done() sees it, and wrk's own CPU time
	// (os.clock, all its threads) taken before the histogram dump below
	// costs anything.
	RunLinePrefix = "benchrun-wrk "
	// HistLinePrefix starts "benchrun-hist <µs>:<count> ...": every
	// non-empty bucket of wrk's latency histogram, or "benchrun-hist
	// skipped" when the dump would take too long.
	HistLinePrefix = "benchrun-hist "
)

// Bucket is one non-empty latency bucket of wrk's histogram (1 µs wide).
type Bucket struct {
	Micros int64
	Count  int64
}

var errHist = errors.New("wrkout: bad histogram line")

// DoneScript is the Lua done() that benchrun appends to every wrk script.
// It prints the run's duration and completed requests (from which wrk
// derived its correction interval), wrk's own CPU time, and the histogram.
// latency(i) is wrk's stats_value_at, a scan from the minimum per call, so
// the dump costs about buckets × range / 2 steps: it is skipped beyond
// maxDumpSteps (a few seconds of wrk's CPU after its run) and the caller
// falls back to wrk's printed distribution.
const DoneScript = `done = function(summary, latency, requests)
  io.write(string.format("benchrun-wrk duration=%d requests=%d cpu=%.6f\n", summary.duration, summary.requests, os.clock()))
  local n = #latency
  if n * (latency.max - latency.min) / 2 > 4e9 then
    io.write("benchrun-hist skipped\n")
    return
  end
  local parts = {}
  for i = 1, n do
    local v, c = latency(i)
    parts[#parts + 1] = string.format("%d:%d", v, c)
  end
  io.write("benchrun-hist ", table.concat(parts, " "), "\n")
end
`

// parseRunLine parses the fields of a RunLinePrefix line.
func parseRunLine(r *Result, rest string) error {
	for _, kv := range strings.Fields(rest) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("wrkout: bad run line field %q", kv)
		}
		switch k {
		case "duration":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return fmt.Errorf("wrkout: bad run duration %q", v)
			}
			r.RunMicros = n
		case "requests":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("wrkout: bad run requests %q", v)
			}
			r.RunRequests = n
		case "cpu":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || math.IsInf(f, 0) {
				return fmt.Errorf("wrkout: bad run cpu %q", v)
			}
			r.WrkCPU = time.Duration(math.Round(f * 1e9))
		}
	}
	return nil
}

// parseHist parses the buckets of a HistLinePrefix line.
func parseHist(rest string) ([]Bucket, bool, error) {
	rest = strings.TrimSpace(rest)
	if rest == "skipped" {
		return nil, true, nil
	}
	var h []Bucket
	for _, f := range strings.Fields(rest) {
		v, c, ok := strings.Cut(f, ":")
		if !ok {
			return nil, false, errHist
		}
		us, err1 := strconv.ParseInt(v, 10, 64)
		n, err2 := strconv.ParseInt(c, 10, 64)
		if err1 != nil || err2 != nil || us < 0 || n <= 0 {
			return nil, false, errHist
		}
		h = append(h, Bucket{us, n})
	}
	slices.SortFunc(h, func(a, b Bucket) int { return int(a.Micros - b.Micros) })
	return h, false, nil
}

// CorrectionInterval is the interval wrk 4.1 uses for its coordinated-
// omission correction: runtime / (completed / connections), in integer
// microseconds as wrk computes it; 0 when wrk made no correction.
func CorrectionInterval(runMicros, requests int64, conns int) int64 {
	if conns <= 0 || requests/int64(conns) == 0 {
		return 0
	}
	return runMicros / (requests / int64(conns))
}

// Uncorrect undoes wrk's coordinated-omission correction on the histogram
// it dumped. wrk (stats_correct) adds, for every recorded latency n >=
// 2·interval, its count at n−interval, n−2·interval, ... while above one
// interval, and raises its total count by as much; it does not lower the
// histogram's minimum, so counts added below the smallest recorded latency
// are invisible to its percentile loop, which then runs out before the
// rank of the high percentiles and returns 0 ("p99 0 ns"). With pipelining
// the correction is wrong in kind as well: wrk records one latency per
// batch but derives the interval from responses.
//
// Going down from the largest bucket, a bucket's own recorded count is its
// dumped count minus the recorded counts of the buckets one, two, ...
// intervals above it (kept per residue modulo the interval). Buckets at or
// below one interval never received added counts. A negative result means
// the dump does not fit the interval; Uncorrect then returns an error.
func Uncorrect(h []Bucket, interval int64) ([]Bucket, error) {
	if interval <= 0 {
		return slices.Clone(h), nil
	}
	out := make([]Bucket, len(h))
	above := map[int64]int64{} // residue → recorded counts above
	for i := len(h) - 1; i >= 0; i-- {
		b := h[i]
		own := b.Count
		if b.Micros > interval {
			r := b.Micros % interval
			own -= above[r]
			if own < 0 {
				return nil, fmt.Errorf("wrkout: histogram does not match a correction interval of %d µs", interval)
			}
			above[r] += own
		}
		out[i] = Bucket{b.Micros, own}
	}
	return slices.DeleteFunc(out, func(b Bucket) bool { return b.Count == 0 }), nil
}

// HistPercentile is the p-th percentile (0 < p <= 100) of a sorted
// histogram, by the nearest-rank rule wrk uses; ok is false for an empty
// histogram.
func HistPercentile(h []Bucket, p float64) (time.Duration, bool) {
	var total int64
	for _, b := range h {
		total += b.Count
	}
	if total == 0 {
		return 0, false
	}
	rank := int64(math.Round(p/100*float64(total) + 0.5))
	var seen int64
	for _, b := range h {
		seen += b.Count
		if seen >= rank {
			return time.Duration(b.Micros) * time.Microsecond, true
		}
	}
	return time.Duration(h[len(h)-1].Micros) * time.Microsecond, true
}

// UseHistogram replaces the printed latency distribution with the
// percentiles of the recorded (uncorrected) latencies from the dumped
// histogram. It reports whether it did; without a dump (an old script, or
// a dump skipped as too long) r keeps wrk's printed percentiles, from which
// Parse has already dropped the impossible zeros.
func (r *Result) UseHistogram(conns int, percentiles []float64) (bool, error) {
	if len(r.Hist) == 0 || r.RunMicros == 0 {
		return false, nil
	}
	h, err := Uncorrect(r.Hist, CorrectionInterval(r.RunMicros, r.RunRequests, conns))
	if err != nil {
		return false, err
	}
	lat := map[float64]time.Duration{}
	for _, p := range percentiles {
		if d, ok := HistPercentile(h, p); ok {
			lat[p] = d
		}
	}
	r.Latency = lat
	r.LatencyFromHist = true
	return true, nil
}
