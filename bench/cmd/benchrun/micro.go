package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/simdedge/simdedge/bench/internal/gobench"
	"github.com/simdedge/simdedge/bench/internal/procstat"
	"github.com/simdedge/simdedge/bench/internal/progress"
	"github.com/simdedge/simdedge/bench/internal/report"
)

// microArea is one `go test -bench` invocation.
type microArea struct {
	name string
	// module is "bench" (bench/micro) or "root" (the asm package).
	module string
	pkg    string
	bench  string
	// tags are the build tags of the test binary ("" for none).
	tags string
	// peerTag is added to tags when peerFile exists: a cgo peer that
	// builds only where its library is installed (simdjson's header),
	// so the area still runs, without that row, where it is not.
	peerTag, peerFile string
	// missing, if set, says why the area cannot be built here ("" when
	// it can); the area is then skipped with that note.
	missing func() string
	// afterRound, if set, runs after each round of the test binary and
	// returns benchmark lines of its own (a peer outside Go), so that
	// they interleave with the rounds.
	afterRound func(ctx context.Context, e *env, o microOpts) (lines []string, err error)
	// summarize, if set, turns the area's results into notes.
	summarize func(results []gobench.Result) []string
	// fullCount and fullBenchtime, if set, replace the full run's rounds
	// and bench time for this area (not quick runs, nor -count or
	// -benchtime given on the command line).
	fullCount     int
	fullBenchtime string
}

// microAreas lists the micro areas in run order.
var microAreas = []microArea{
	{name: "url", module: "bench", pkg: "./micro/", bench: "^BenchmarkURLParse"},
	{name: "http", module: "bench", pkg: "./micro/", bench: "^BenchmarkHTTPRequest$"},
	// JSON on the large documents (canada 2.2 MB, citm 1.7 MB) is the
	// area other processes disturb most (memory-bound, every row slower
	// by 15-60 % in a disturbed round of the 2026-11-22 run, allocation-
	// free rows included, so not GC): 20 rounds of 0.5 s in the time of
	// 10 of 1 s, so that the median's 95 % interval, x(6)..x(15) of 20
	// instead of x(2)..x(9) of 10, stays inside the undisturbed rounds
	// with up to five disturbed ones on one side instead of one.
	{name: "json", module: "bench", pkg: "./micro/", bench: "^BenchmarkJSON", fullCount: 20, fullBenchtime: "500ms",
		peerTag: "simdjson", peerFile: "/usr/include/simdjson.h"},
	{name: "asm", module: "root", pkg: "./asm", bench: "."},
	// The datagram fast path against a kernel UDP socket, fed raw frames
	// by a live-frames generator (needs root; see bench/xdp).
	{name: "xdp", module: "bench", pkg: "./xdp/", bench: "^BenchmarkDatagram$"},
	// The RDMA message transport (libfabric's tcp provider on loopback)
	// against the server core on kernel TCP keep-alive, and fi_pingpong
	// after every round (rdma.go).
	rdmaArea,
}

// simd and generic are the implementations counted as "ours" in the
// summary for the parser areas.
var oursParsers = []string{"simdedge", "simdedge_purego"}

// areaSpecs says, per top-level benchmark, which peer its ratios are taken
// against. The asm kernels are compared with their pure-Go twin.
func areaSpecs(asmLevels []string) map[string]report.AreaSpec {
	specs := map[string]report.AreaSpec{
		"URLParse":       {Section: "url", Peer: report.PeerRef{Impl: "net_url"}, Ours: oursParsers},
		"URLParseAlloc":  {Section: "url", Peer: report.PeerRef{Area: "URLParse", Impl: "net_url"}, Ours: []string{""}},
		"HTTPRequest":    {Section: "http", Peer: report.PeerRef{Impl: "net_http"}, Ours: oursParsers},
		"JSON":           {Section: "json", Peer: report.PeerRef{Impl: "encoding_json"}, Ours: oursParsers},
		"JSONExtract":    {Section: "json", Peer: report.PeerRef{Impl: "encoding_json"}, Ours: oursParsers},
		"Datagram":       {Section: "xdp", Peer: report.PeerRef{Impl: "transport=udp"}, Ours: []string{"transport=xdp"}},
		"TransportVsTCP": {Section: "rdma", Peer: report.PeerRef{Impl: "kernel_tcp"}, Ours: []string{"rdma", "rdma_envelope"}},
		"FiPingpong":     {Section: "rdma", Reference: "libfabric's own fi_pingpong (96-byte messages, the transport's request message; tcp provider, both processes' CPU per round trip), the reference the rdma transport's CPU per request is compared with in the Notes"},
	}
	for _, k := range []string{"Classify", "IndexTabNewline", "IndexControlOrNonASCII", "ToLower",
		"PrefixSum8", "PrefixSum16", "PrefixSum32", "ExclusivePrefixSum32", "ValidUTF8"} {
		specs[k] = asmSpec(asmLevels)
	}
	return specs
}

// asmSpec is the spec of an asm kernel's benchmark: every SIMD level
// against the pure-Go twin. Kernels the list above does not name yet get it
// too (addAsmSpecs), so that a new kernel's table has its peer.
func asmSpec(asmLevels []string) report.AreaSpec {
	var ours []string
	for _, l := range asmLevels {
		if l != "generic" {
			ours = append(ours, "level="+l)
		}
	}
	return report.AreaSpec{Section: "asm", Peer: report.PeerRef{Impl: "level=generic"}, Ours: ours, Compact: true}
}

// addAsmSpecs gives every benchmark of the asm area without a spec the asm
// kernels' spec.
func addAsmSpecs(specs map[string]report.AreaSpec, asmResults []gobench.Result, asmLevels []string) {
	for _, r := range asmResults {
		if a, _, _ := gobench.Parts(r.Name); specs[a].Section == "" {
			specs[a] = asmSpec(asmLevels)
		}
	}
}

// microOpts are the go test settings.
type microOpts struct {
	count     int
	benchtime string
	// perRun estimates one benchmark run in seconds, for the plan.
	perRun float64
}

// microResult is what one area produced.
type microResult struct {
	results []gobench.Result
	// raw is the benchstat-format text (config and result lines).
	raw   string
	notes []string
	// others is, per round, the CPU other processes used while the test
	// binary ran, in CPUs (NaN when /proc/stat could not be read).
	others []float64
}

// testBinary compiles the area's package once (`go test -c`) into the
// scratch directory and returns the binary's path, shared by areas of the
// same package. Running the binary directly keeps the go command's build
// checks and linking (seconds each on a busy machine) out of every round.
func testBinary(ctx context.Context, e *env, a microArea) (string, error) {
	dir := moduleDir(e, a)
	tags := a.tags
	if a.peerTag != "" && fileExists(a.peerFile) {
		tags = strings.TrimPrefix(tags+","+a.peerTag, ",")
	}
	name := strings.NewReplacer("/", "_", ".", "", ",", "_").Replace(a.module + a.pkg + tags)
	bin := filepath.Join(e.tmp, name+".test")
	if fileExists(bin) {
		return bin, nil
	}
	argv := []string{"go", "test", "-c", "-o", bin}
	if tags != "" {
		argv = append(argv, "-tags", tags)
	}
	if out, err := runCmd(ctx, dir, append(argv, a.pkg)...); err != nil {
		return "", fmt.Errorf("go test -c %s: %v: %s", a.pkg, errors.Unwrap(err), lastLine(out))
	}
	return bin, nil
}

func moduleDir(e *env, a microArea) string {
	if a.module == "root" {
		return e.repo
	}
	return e.bench
}

// benchCmd runs the area's test binary in the package directory (as go test
// would), in its own process group so that cancellation stops it.
func benchCmd(ctx context.Context, e *env, a microArea, bin string, args ...string) *exec.Cmd {
	argv := append([]string{"-test.run", "^$", "-test.bench", a.bench, "-test.benchmem"}, args...)
	cmd := exec.CommandContext(ctx, bin, argv...)
	cmd.Dir = filepath.Join(moduleDir(e, a), a.pkg)
	cmd.SysProcAttr = ownProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// enumerate builds the area's test binary and runs every benchmark once
// (-benchtime 1x), which checks that the area works and tells how many
// benchmarks the real run has, for the progress estimate.
func enumerate(ctx context.Context, e *env, a microArea) (string, int, []string, error) {
	bin, err := testBinary(ctx, e, a)
	if err != nil {
		return "", 0, nil, err
	}
	cmd := benchCmd(ctx, e, a, bin, "-test.benchtime", "1x", "-test.count", "1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	res, _, _ := gobench.Parse(bytes.NewReader(out.Bytes()))
	notes := skipNotes(out.String())
	if err != nil {
		return bin, len(res), notes, fmt.Errorf("%s %s: %v: %s", a.pkg, a.bench, err, lastLine(out.Bytes()))
	}
	return bin, len(res), notes, nil
}

// skipNotes collects the reasons of skipped benchmarks (absent corpora).
func skipNotes(out string) []string {
	var notes []string
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "--- SKIP:") {
			reason := ""
			if i+1 < len(lines) {
				reason = strings.TrimSpace(lines[i+1])
			}
			notes = append(notes, strings.TrimPrefix(t, "--- SKIP: ")+" skipped: "+reason)
		}
	}
	return notes
}

// runMicro runs the area for real: -count separate `go test -count 1`
// invocations rather than one `go test -count N`, because go test runs a
// leaf benchmark's N samples back to back; separate rounds spread each
// implementation's samples over the whole run (A, B, C, A, B, C...), so a
// burst of load from another process on the shared machine disturbs every
// implementation a little instead of one a lot.
func runMicro(ctx context.Context, e *env, bar *progress.Bar, a microArea, bin string, o microOpts, planned float64) microResult {
	var mr microResult
	var raw strings.Builder
	area := "micro " + a.name
	done := 0.0
	start := time.Now()
	for round := 1; round <= o.count && ctx.Err() == nil; round++ {
		bar.Set(area, fmt.Sprintf("round %d/%d", round, o.count))
		cmd := benchCmd(ctx, e, a, bin, "-test.benchtime", o.benchtime, "-test.count", "1")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			mr.notes = append(mr.notes, fmt.Sprintf("%s: %v", area, err))
			break
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			mr.notes = append(mr.notes, fmt.Sprintf("%s: %v", area, err))
			break
		}
		busy0, busyErr0 := procstat.SystemBusy()
		t0 := time.Now()
		var all strings.Builder
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
		for sc.Scan() {
			line := sc.Text()
			all.WriteString(line + "\n")
			if r, err := gobench.ParseLine(line); err == nil {
				mr.results = append(mr.results, r)
				raw.WriteString(line + "\n")
				if done+o.perRun <= planned {
					bar.Done(o.perRun)
					done += o.perRun
				}
				bar.Set(area, fmt.Sprintf("round %d/%d %s", round, o.count, strings.TrimPrefix(r.Name, "Benchmark")))
				continue
			}
			// Configuration lines once: benchstat reads them as headers.
			if round == 1 && isConfigLine(line) {
				raw.WriteString(line + "\n")
			}
		}
		werr := cmd.Wait()
		mr.others = append(mr.others, othersCPU(busy0, busyErr0, time.Since(t0), cmd.ProcessState))
		if err := werr; err != nil && ctx.Err() == nil {
			mr.notes = append(mr.notes, fmt.Sprintf("%s: benchmark binary failed in round %d after %s (%v): %s", area, round,
				time.Since(start).Round(time.Second), err, lastLine([]byte(all.String()+stderr.String()))))
			break
		}
		if a.afterRound != nil && ctx.Err() == nil {
			lines, err := a.afterRound(ctx, e, o)
			if err != nil {
				mr.notes = append(mr.notes, fmt.Sprintf("%s: %v; no further rounds of it", area, err))
				a.afterRound = nil
			}
			for _, line := range lines {
				if r, err := gobench.ParseLine(line); err == nil {
					mr.results = append(mr.results, r)
					raw.WriteString(line + "\n")
				}
			}
		}
	}
	if a.summarize != nil {
		mr.notes = append(mr.notes, a.summarize(mr.results)...)
	}
	bar.Done(planned - done)
	mr.raw = raw.String()
	return mr
}

// othersCPU is the CPU other processes took during a round of the test
// binary, in CPUs: the machine's busy time over the round less the
// binary's own rusage. NaN when it cannot be known.
func othersCPU(busy0 time.Duration, err0 error, wall time.Duration, ps *os.ProcessState) float64 {
	busy1, err1 := procstat.SystemBusy()
	if err0 != nil || err1 != nil || ps == nil || wall <= 0 {
		return math.NaN()
	}
	own := ps.UserTime() + ps.SystemTime()
	return max(0, float64(busy1-busy0-own)/float64(wall))
}

// isConfigLine keeps the goos/goarch/pkg/cpu header lines for benchstat.
func isConfigLine(line string) bool {
	for _, k := range []string{"goos:", "goarch:", "pkg:", "cpu:"} {
		if strings.HasPrefix(line, k) {
			return true
		}
	}
	return false
}
