package micro

import (
	"bytes"
	neturl "net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/asm"
	"github.com/simdedge/simdedge/parse/url"
)

// urlCorpora are the URL benchmark corpora (one URL per line) under the
// shared data directory; see its README for their origin and licences.
var urlCorpora = []struct{ name, file string }{
	{"kasztp", "urls/kasztp.txt"},
	{"userbait", "urls/userbait.txt"},
}

// urlLines splits a corpus into its non-empty lines, dropping a leading
// UTF-8 byte order mark (kasztp.txt starts with one).
func urlLines(data []byte) (lines []string, total int64) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for _, l := range bytes.Split(data, []byte("\n")) {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(l) == 0 {
			continue
		}
		lines = append(lines, string(l))
		total += int64(len(l))
	}
	return lines, total
}

// urlImpl is one URL parser under benchmark: parse is called once per
// input with the input's index (so stateful implementations can reuse
// storage) and reports success.
type urlImpl struct {
	name  string
	setup func() (parse func(s string) bool, teardown func())
}

// urlImpls lists the implementations BenchmarkURLParse compares.
// nlnwa/whatwg-url is added by url_nlnwa_test.go when the bench module's
// go.sum has its dependencies (see the parse/url report).
var urlImpls = []urlImpl{
	{"simdedge", func() (func(string) bool, func()) {
		var u url.URL
		return func(s string) bool { return url.ParseInto(&u, s, nil) == nil }, func() {}
	}},
	{"simdedge_purego", func() (func(string) bool, func()) {
		prev := asm.SetLevel(asm.Generic)
		var u url.URL
		return func(s string) bool { return url.ParseInto(&u, s, nil) == nil }, func() { asm.SetLevel(prev) }
	}},
	{"net_url", func() (func(string) bool, func()) {
		return func(s string) bool { _, err := neturl.Parse(s); return err == nil }, func() {}
	}},
}

// BenchmarkURLParse parses every URL of a corpus per op. b.SetBytes is the
// corpus size, so MB/s is input throughput; ns/URL is reported beside it.
// Each implementation parses the same inputs; failures are counted, not
// skipped, so every implementation does the same work.
func BenchmarkURLParse(b *testing.B) {
	for _, c := range urlCorpora {
		b.Run(c.name, func(b *testing.B) {
			lines, total := urlLines(sharedData(b, c.file))
			for _, impl := range urlImpls {
				b.Run(impl.name, func(b *testing.B) {
					parse, teardown := impl.setup()
					defer teardown()
					benchURLLines(b, lines, total, parse)
				})
			}
		})
	}
}

// benchURLLines parses every line per op with parse, reporting allocations,
// MB/s of input, wall-clock ns/URL and (where /proc exists) cpu-ns/URL.
func benchURLLines(b *testing.B, lines []string, total int64, parse func(string) bool) {
	b.SetBytes(total)
	b.ReportAllocs()
	cpu0, cpuOK := urlProcessCPU()
	for b.Loop() {
		for _, s := range lines {
			parse(s)
		}
	}
	cpu1, _ := urlProcessCPU()
	perURL := float64(b.N) * float64(len(lines))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/perURL, "ns/URL")
	if cpuOK {
		b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/perURL, "cpu-ns/URL")
	}
}

// urlProcessCPU returns the CPU time (user + system, all threads) the
// process has used so far, from /proc/self/stat, and false where that file
// does not exist. BenchmarkURLParse reports it per URL as cpu-ns/URL beside
// the wall-clock ns/URL: on a shared machine the wall clock also counts the
// time other processes hold the CPU, the CPU time does not (it does count
// the parser's own garbage collection). Resolution is one clock tick
// (urlClockTick); benchmarks run far longer than that.
func urlProcessCPU() (time.Duration, bool) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, false
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 of the line, 12 and 13 after ") ".
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(string(data[i+1:]))
	const utimeField, stimeField = 11, 12
	if len(f) <= stimeField {
		return 0, false
	}
	ut, err1 := strconv.ParseUint(f[utimeField], 10, 64)
	st, err2 := strconv.ParseUint(f[stimeField], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * urlClockTick, true
}

// urlClockTick is the unit of /proc/self/stat times: USER_HZ, 100 on
// every Linux architecture Go supports.
const urlClockTick = 10 * time.Millisecond

// urlSink keeps the URLs Parse returns reachable, so the benchmark
// measures the allocation a caller that keeps them pays.
var urlSink *url.URL

// BenchmarkURLParseAlloc is simdedge's Parse (a new URL per input), for
// callers that keep every URL.
func BenchmarkURLParseAlloc(b *testing.B) {
	for _, c := range urlCorpora {
		b.Run(c.name, func(b *testing.B) {
			lines, total := urlLines(sharedData(b, c.file))
			benchURLLines(b, lines, total, parseAlloc)
		})
	}
}

func parseAlloc(s string) bool {
	u, err := url.Parse(s, nil)
	urlSink = u
	return err == nil
}

// urlValueSink keeps the last URL ParseValue returned, as urlSink does
// for Parse.
var urlValueSink url.URL

func parseValue(s string) bool {
	u, err := url.ParseValue(s, nil)
	urlValueSink = u
	return err == nil
}

// urlBytesSink keeps the last buffer BenchmarkURLAllocFloor allocates.
var urlBytesSink []byte

// BenchmarkURLAllocFloor is what Parse and ParseValue pay beyond parsing,
// alone, in the same loop over the same corpus (so the same live heap for
// the GC to mark): NewURL is the URL object Parse allocates when its href
// views the input; CopyHref a copy of the input, the pointer-free href
// ParseValue allocates when the href differs from it. Set beside the C
// harness's malloc+copy+free of each line (bench/results/parsers-url-2026-11-28-pass2.md).
func BenchmarkURLAllocFloor(b *testing.B) {
	for _, c := range urlCorpora {
		b.Run(c.name, func(b *testing.B) {
			lines, total := urlLines(sharedData(b, c.file))
			b.Run("NewURL", func(b *testing.B) {
				benchURLLines(b, lines, total, func(string) bool { urlSink = new(url.URL); return true })
			})
			b.Run("CopyHref", func(b *testing.B) {
				benchURLLines(b, lines, total, func(s string) bool { urlBytesSink = append([]byte(nil), s...); return true })
			})
		})
	}
}

// BenchmarkURLLevels runs ParseInto and Parse on every SIMD level this CPU
// has (asm.Levels), so a figure for one path always has its twin from the
// same run: BenchmarkURLLevels/<corpus>/<level>/<ParseInto|Parse|ParseValue>.
func BenchmarkURLLevels(b *testing.B) {
	for _, c := range urlCorpora {
		b.Run(c.name, func(b *testing.B) {
			lines, total := urlLines(sharedData(b, c.file))
			for _, l := range asm.Levels() {
				b.Run(l.String(), func(b *testing.B) {
					prev := asm.SetLevel(l)
					defer asm.SetLevel(prev)
					var u url.URL
					b.Run("ParseInto", func(b *testing.B) {
						benchURLLines(b, lines, total, func(s string) bool { return url.ParseInto(&u, s, nil) == nil })
					})
					b.Run("Parse", func(b *testing.B) { benchURLLines(b, lines, total, parseAlloc) })
					b.Run("ParseValue", func(b *testing.B) { benchURLLines(b, lines, total, parseValue) })
				})
			}
		})
	}
}

// TestURLCorpusParses checks that the benchmark measures real work: the
// corpora are valid URLs, so simdedge must parse (nearly) all of them, and
// agree with net/url on the host of plain http(s) URLs.
func TestURLCorpusParses(t *testing.T) {
	for _, c := range urlCorpora {
		lines, _ := urlLines(sharedData(t, c.file))
		failed, hostDiff := 0, 0
		for _, s := range lines {
			u, err := url.Parse(s, nil)
			if err != nil {
				failed++
				continue
			}
			if v, err := neturl.Parse(s); err == nil && (v.Scheme == "http" || v.Scheme == "https") &&
				v.Hostname() != u.Hostname() && "["+v.Hostname()+"]" != u.Hostname() {
				hostDiff++
			}
		}
		t.Logf("%s: %d URLs, %d fail to parse, %d hostnames differ from net/url (case, IDNA, IPv4 forms)", c.name, len(lines), failed, hostDiff)
		if failed*100 > len(lines) {
			t.Errorf("%s: %d of %d URLs fail to parse", c.name, failed, len(lines))
		}
	}
}
