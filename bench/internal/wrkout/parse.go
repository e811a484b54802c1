package wrkout

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Result is one wrk run.
type Result struct {
	Requests int64
	Duration time.Duration
	// RPS is wrk's "Requests/sec" (completed requests over the run).
	RPS float64
	// Latency maps a percentile (50, 75, 90, 99) to its latency.
	Latency map[float64]time.Duration
	// SocketErrors sums connect, read, write and timeout errors.
	SocketErrors int64
	// Non2xx counts "Non-2xx or 3xx responses".
	Non2xx int64
	// ZeroPercentiles lists the percentiles wrk printed as 0 although
	// requests completed: wrk 4.1 loses the counts its coordinated-omission
	// correction adds below the smallest latency and then prints 0 for the
	// high percentiles (see Uncorrect). Parse leaves them out of Latency.
	ZeroPercentiles []float64

	// The rest comes from benchrun's done() script (DoneScript), when the
	// run used it.

	// RunMicros and RunRequests are wrk's runtime (µs) and completed
	// requests as its done() saw them.
	RunMicros, RunRequests int64
	// WrkCPU is wrk's own CPU time (all its threads) up to its done().
	WrkCPU time.Duration
	// Hist is wrk's latency histogram as dumped (after its correction),
	// sorted by latency; nil without a dump.
	Hist []Bucket
	// HistSkipped says the script skipped the dump as too long.
	HistSkipped bool
	// LatencyFromHist says Latency holds the percentiles of the recorded
	// latencies computed from Hist (UseHistogram), not wrk's printout.
	LatencyFromHist bool
}

var (
	errNoSummary = errors.New("wrkout: no \"requests in\" summary line")
	errNoRPS     = errors.New("wrkout: no Requests/sec line")
)

// maxLine bounds one line of wrk's output (the histogram dump).
const maxLine = 64 << 20

// Parse reads wrk's output. It fails when the summary or Requests/sec lines
// are missing (wrk could not connect), never on lines it does not know.
func Parse(out string) (Result, error) {
	r := Result{Latency: map[float64]time.Duration{}}
	var haveSummary, haveRPS, inDist bool
	sc := bufio.NewScanner(strings.NewReader(out))
	// The histogram line holds one field per microsecond bucket.
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		switch {
		case line == "Latency Distribution":
			inDist = true
			continue
		case inDist && len(f) == 2 && strings.HasSuffix(f[0], "%"):
			p, err1 := strconv.ParseFloat(strings.TrimSuffix(f[0], "%"), 64)
			d, err2 := ParseDuration(f[1])
			if err1 != nil || err2 != nil {
				return Result{}, fmt.Errorf("wrkout: bad latency line %q", line)
			}
			if d == 0 {
				// No request takes 0 µs: this is wrk's lost-count
				// defect, not a latency.
				r.ZeroPercentiles = append(r.ZeroPercentiles, p)
				continue
			}
			r.Latency[p] = d
			continue
		case strings.HasPrefix(line, RunLinePrefix):
			if err := parseRunLine(&r, strings.TrimPrefix(line, RunLinePrefix)); err != nil {
				return Result{}, err
			}
		case strings.HasPrefix(line, HistLinePrefix):
			h, skipped, err := parseHist(strings.TrimPrefix(line, HistLinePrefix))
			if err != nil {
				return Result{}, err
			}
			r.Hist, r.HistSkipped = h, skipped
		case strings.Contains(line, " requests in "):
			// "28648 requests in 2.01s, 3.63MB read"
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || len(f) < 4 {
				return Result{}, fmt.Errorf("wrkout: bad summary line %q", line)
			}
			d, err := ParseDuration(strings.TrimSuffix(f[3], ","))
			if err != nil {
				return Result{}, fmt.Errorf("wrkout: bad summary line %q", line)
			}
			r.Requests, r.Duration, haveSummary = n, d, true
		case strings.HasPrefix(line, "Requests/sec:") && len(f) == 2:
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return Result{}, fmt.Errorf("wrkout: bad rate line %q", line)
			}
			r.RPS, haveRPS = v, true
		case strings.HasPrefix(line, "Socket errors:"):
			// "Socket errors: connect 0, read 12, write 0, timeout 3"
			for i := 2; i+1 < len(f); i += 2 {
				n, err := strconv.ParseInt(strings.TrimSuffix(f[i+1], ","), 10, 64)
				if err != nil {
					return Result{}, fmt.Errorf("wrkout: bad socket error line %q", line)
				}
				r.SocketErrors += n
			}
		case strings.HasPrefix(line, "Non-2xx or 3xx responses:"):
			n, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			if err != nil {
				return Result{}, fmt.Errorf("wrkout: bad non-2xx line %q", line)
			}
			r.Non2xx = n
		}
		// Percentile lines continue above, so any line reaching here ends
		// the distribution block.
		inDist = false
	}
	if err := sc.Err(); err != nil {
		return Result{}, fmt.Errorf("wrkout: %w", err)
	}
	if !haveSummary {
		return Result{}, errNoSummary
	}
	if !haveRPS {
		return Result{}, errNoRPS
	}
	return r, nil
}

// wrkUnits are the suffixes wrk prints durations with (its units.c), longest
// first so that "ms" is tried before "m" and "s".
var wrkUnits = []struct {
	suffix string
	unit   time.Duration
}{
	{"us", time.Microsecond},
	{"ms", time.Millisecond},
	{"s", time.Second},
	{"m", time.Minute},
	{"h", time.Hour},
}

// ParseDuration parses a wrk duration such as "591.00us", "9.08ms", "2.01s"
// or "1.00m".
func ParseDuration(s string) (time.Duration, error) {
	for _, u := range wrkUnits {
		if v, ok := strings.CutSuffix(s, u.suffix); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 {
				return 0, fmt.Errorf("wrkout: bad duration %q", s)
			}
			// Rounded: wrk prints two decimals, which float64 does not
			// hold exactly ("2.01s" would become 2.009999999s).
			return time.Duration(math.Round(f * float64(u.unit))), nil
		}
	}
	return 0, fmt.Errorf("wrkout: bad duration %q", s)
}
