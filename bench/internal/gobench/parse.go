package gobench

import (
	"bufio"
	"errors"
	"io"
	"strconv"
	"strings"
)

// Result is one benchmark result line.
type Result struct {
	// Name is the full name without the "-GOMAXPROCS" suffix, e.g.
	// "BenchmarkURLParse/kasztp/simdedge".
	Name string
	// Procs is the GOMAXPROCS suffix (1 when absent).
	Procs int
	// Iterations is b.N.
	Iterations int64
	// Metrics maps a unit ("ns/op", "MB/s", "B/op", "allocs/op", or a
	// b.ReportMetric unit) to its value.
	Metrics map[string]float64
	// Line is the line as printed, kept for the benchstat file.
	Line string
}

// Config is a "key: value" configuration line (goos, goarch, pkg, cpu).
type Config struct{ Key, Value string }

// errNotResult reports a line that is not a benchmark result.
var errNotResult = errors.New("gobench: not a benchmark result line")

// ParseLine parses one result line. A line qualifies when it starts with
// "Benchmark" followed by an upper-case letter or end of name, has an
// integer iteration count and then value/unit pairs.
func ParseLine(line string) (Result, error) {
	f := strings.Fields(line)
	// name, iterations, and at least one value-unit pair.
	const minFields = 4
	if len(f) < minFields || (len(f)-2)%2 != 0 || !strings.HasPrefix(f[0], "Benchmark") {
		return Result{}, errNotResult
	}
	n, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return Result{}, errNotResult
	}
	r := Result{Iterations: n, Metrics: make(map[string]float64, (len(f)-2)/2), Line: line}
	r.Name, r.Procs = splitProcs(f[0])
	for i := 2; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Result{}, errNotResult
		}
		r.Metrics[f[i+1]] = v
	}
	return r, nil
}

// splitProcs removes the "-N" GOMAXPROCS suffix that the testing package
// appends when GOMAXPROCS > 1.
func splitProcs(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || strings.IndexByte(name[i:], '/') >= 0 {
		return name, 1
	}
	p, err := strconv.Atoi(name[i+1:])
	if err != nil || p <= 0 {
		return name, 1
	}
	return name[:i], p
}

// Parse reads go test -bench output and returns its result lines and its
// configuration lines, in order; other lines (PASS, ok, logs) are skipped.
func Parse(r io.Reader) ([]Result, []Config, error) {
	var res []Result
	var cfg []Config
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if br, err := ParseLine(line); err == nil {
			res = append(res, br)
			continue
		}
		if c, ok := parseConfig(line); ok {
			cfg = append(cfg, c)
		}
	}
	return res, cfg, sc.Err()
}

// parseConfig recognises "key: value" lines whose key is a lower-case word,
// as the benchmark format defines them.
func parseConfig(line string) (Config, bool) {
	k, v, ok := strings.Cut(line, ":")
	if !ok || k == "" || strings.ContainsAny(k, " \t") || !isLowerStart(k) {
		return Config{}, false
	}
	return Config{Key: k, Value: strings.TrimSpace(v)}, true
}

func isLowerStart(s string) bool { return s[0] >= 'a' && s[0] <= 'z' }

// Parts splits a result name into its area (the top-level benchmark without
// the "Benchmark" prefix), the case (middle segments joined by "/") and the
// implementation (the last segment). "BenchmarkURLParse/kasztp/net_url" gives
// ("URLParse", "kasztp", "net_url"). With one sub-benchmark level the segment
// is the case and the implementation is empty ("BenchmarkURLParseAlloc/kasztp"
// gives ("URLParseAlloc", "kasztp", "")); without sub-benchmarks both are
// empty.
func Parts(name string) (area, cse, impl string) {
	name = strings.TrimPrefix(name, "Benchmark")
	segs := strings.Split(name, "/")
	area = segs[0]
	switch len(segs) {
	case 1:
		return area, "", ""
	case 2:
		return area, segs[1], ""
	}
	impl = segs[len(segs)-1]
	cse = strings.Join(segs[1:len(segs)-1], "/")
	return area, cse, impl
}
