package accesslog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func sampleEntry() *Entry {
	return &Entry{
		Time: time.Date(2026, 11, 25, 23, 46, 10, 123456789, time.UTC), Duration: 1500 * time.Microsecond,
		Remote: []byte("127.0.0.1"), Method: []byte("GET"), Host: []byte("example.com"),
		Target: []byte("/p?q=1"), Proto: "HTTP/1.1", Status: 200, BytesIn: 78, BytesOut: 12,
		Route: "r0", Upstream: "app", UpstreamTarget: "127.0.0.1:8080",
		RequestID: []byte("abc-1"), UserAgent: []byte("curl/8"), Referer: []byte("http://x/"),
	}
}

func TestJSONLine(t *testing.T) {
	var tc timeCache
	line := appendJSON(nil, sampleEntry(), &tc)
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	want := map[string]any{"time": "2026-11-25T23:46:10.123456Z", "remote": "127.0.0.1", "method": "GET",
		"host": "example.com", "path": "/p?q=1", "proto": "HTTP/1.1", "status": 200.0, "bytes_in": 78.0,
		"bytes_out": 12.0, "duration": 0.0015, "route": "r0", "upstream": "app", "target": "127.0.0.1:8080",
		"request_id": "abc-1", "user_agent": "curl/8", "tls": ""}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if line[len(line)-1] != '\n' || bytes.Count(line, []byte{'\n'}) != 1 {
		t.Errorf("not one line: %q", line)
	}
}

// TestJSONHostileBytes: quotes, backslashes, control bytes, newlines and
// invalid UTF-8 in untrusted fields keep the line one valid JSON object.
func TestJSONHostileBytes(t *testing.T) {
	var tc timeCache
	e := sampleEntry()
	e.Target = []byte("/a\"b\\c\nd\re\x00f\x7f\xff\xfe/é")
	e.UserAgent = []byte("x\"},{\"status\":500")
	line := appendJSON(nil, e, &tc)
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("%q: %v", line, err)
	}
	if m["path"] != "/a\"b\\c\nd\re\x00f\x7f\ufffd\ufffd/é" {
		t.Errorf("path = %q", m["path"])
	}
	if m["user_agent"] != "x\"},{\"status\":500" || m["status"] != 200.0 {
		t.Errorf("forged: %v", m)
	}
	if bytes.Count(line, []byte{'\n'}) != 1 {
		t.Errorf("newline not escaped: %q", line)
	}
}

func TestJSONLongFieldsCut(t *testing.T) {
	var tc timeCache
	e := sampleEntry()
	e.Target = bytes.Repeat([]byte{0x01}, 3*maxTarget)
	e.UserAgent = bytes.Repeat([]byte("\xff"), 3*maxField)
	line := appendJSON(nil, e, &tc)
	if len(line) > maxLine || len(line) > lineBound(e) {
		t.Fatalf("line %d > maxLine %d or its bound %d", len(line), maxLine, lineBound(e))
	}
	// The widest line fits an empty buffer.
	worst := &Entry{Target: make([]byte, 2*maxTarget)}
	for _, f := range []*[]byte{&worst.Remote, &worst.Method, &worst.Host, &worst.RequestID, &worst.UserAgent, &worst.Referer} {
		*f = make([]byte, 2*maxField)
	}
	long := strings.Repeat("r", 2*maxField)
	worst.Route, worst.Upstream, worst.UpstreamTarget = long, long, long
	if b := lineBound(worst); b > bufSize || b > maxLine {
		t.Errorf("worst line bound %d over the buffer %d or maxLine %d", b, bufSize, maxLine)
	}
	if !json.Valid(bytes.TrimSpace(line)) {
		t.Fatal("invalid JSON")
	}
}

func TestCombinedLine(t *testing.T) {
	var tc timeCache
	got := string(appendCombined(nil, sampleEntry(), &tc))
	want := `127.0.0.1 - - [25/Nov/2026:23:46:10 +0000] "GET /p?q=1 HTTP/1.1" 200 12 "http://x/" "curl/8"` + "\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	e := sampleEntry()
	e.Target, e.UserAgent, e.Referer, e.BytesOut = []byte("/a\"\n"), []byte("\x00\\"), nil, 0
	got = string(appendCombined(nil, e, &tc))
	want = `127.0.0.1 - - [25/Nov/2026:23:46:10 +0000] "GET /a\"\x0a HTTP/1.1" 200 - "-" "\x00\\"` + "\n"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// syncBuffer is a goroutine-safe sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// TestConcurrentWritesAllArrive: lines from many goroutines on many shards
// reach the sink whole by Close, or are counted as dropped (a burst faster
// than the sink may drop, by design; the end-to-end test in cmd/simdedge
// checks that a file keeps up with real requests).
func TestConcurrentWritesAllArrive(t *testing.T) {
	sink := &syncBuffer{}
	l, err := Open(Options{Writer: sink})
	if err != nil {
		t.Fatal(err)
	}
	const workers, per = 8, 3000
	onShards(l, workers, func(s *Shard, e *Entry) {
		for i := 0; i < per; i++ {
			s.Write(e)
		}
	})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	n := 0
	sc := bufio.NewScanner(&sink.b)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Fatalf("line %d torn: %q", n, sc.Bytes())
		}
		n++
	}
	if n == 0 || uint64(n) != l.Lines() || uint64(n)+l.Dropped() != workers*per {
		t.Errorf("lines %d, counted %d, dropped %d, want %d", n, l.Lines(), l.Dropped(), workers*per)
	}
}

// TestStalledSinkDrops: a pipe nobody reads stalls the writer; Write keeps
// returning at once, and the lines that find no buffer are counted.
func TestStalledSinkDrops(t *testing.T) {
	pr, pw := io.Pipe()
	defer pr.Close()
	l, err := Open(Options{Writer: pw})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Next()
	e := sampleEntry()
	const lines = 200000 // far more than every buffer holds
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 0; i < lines; i++ {
			s.Write(e)
		}
	}()
	select {
	case <-wrote:
	case <-time.After(30 * time.Second):
		pr.CloseWithError(io.ErrClosedPipe) // let the test end
		t.Fatal("Write blocked on a stalled sink")
	}
	if l.Dropped() == 0 {
		t.Fatal("no line dropped by a stalled sink")
	}
	pr.CloseWithError(io.ErrClosedPipe) // unblocks the writer: its write fails
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := l.Dropped() + l.Lines(); got != lines {
		t.Errorf("dropped %d + written %d = %d, want %d", l.Dropped(), l.Lines(), got, lines)
	}
}

// TestReopen: lines before Reopen are in the renamed file, lines after it
// in the new one, none lost or torn.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	l, err := Open(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Next()
	e := sampleEntry()
	for i := 0; i < 1000; i++ {
		s.Write(e)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	l.Reopen()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("file not reopened")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for i := 0; i < 1000; i++ {
		s.Write(e)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, p := range []string{path + ".1", path} {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" {
				continue
			}
			if !json.Valid([]byte(line)) {
				t.Fatalf("%s: torn line %q", p, line)
			}
			total++
		}
	}
	if total != 2000 {
		t.Errorf("%d lines, want 2000", total)
	}
}

func TestSample(t *testing.T) {
	sink := &syncBuffer{}
	l, err := Open(Options{Writer: sink, Sample: 0.25, Format: Combined})
	if err != nil {
		t.Fatal(err)
	}
	s := l.Next()
	for i := 0; i < 400; i++ {
		s.Write(sampleEntry())
	}
	l.Close()
	if n := bytes.Count(sink.b.Bytes(), []byte{'\n'}); n != 100 {
		t.Errorf("%d lines, want 100", n)
	}
	if _, err := Open(Options{Writer: sink, Sample: 1.5}); err == nil {
		t.Error("sample 1.5 accepted")
	}
}

func TestWriteAllocs(t *testing.T) {
	l, err := Open(Options{Writer: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s := l.Next()
	e := sampleEntry()
	if n := testing.AllocsPerRun(5000, func() { s.Write(e) }); n != 0 {
		t.Errorf("%v allocations per line", n)
	}
}

// BenchmarkWriteJSON is one connection's lines, the writer included (the
// timer stops after Close); dropped/op is the share the writer could not
// take in time (a figure with drops is not the cost of a written line).
func BenchmarkWriteJSON(b *testing.B) {
	l, _ := Open(Options{Writer: io.Discard})
	s := l.Next()
	e := sampleEntry()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s.Write(e)
	}
	l.Close()
	b.StopTimer()
	b.ReportMetric(float64(l.Dropped())/float64(b.N), "dropped/op")
}

// BenchmarkFormatJSON is the formatting alone (no lock, no writer).
func BenchmarkFormatJSON(b *testing.B) {
	var tc timeCache
	e := sampleEntry()
	buf := make([]byte, 0, maxLine)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf = appendJSON(buf[:0], e, &tc)
	}
}

// BenchmarkWriteParallel is lines from concurrent connections, each on its
// own shard, to a sink that takes everything, with the writer's work
// included: the timer stops after Close has written every line.
func BenchmarkWriteParallel(b *testing.B) {
	l, _ := Open(Options{Writer: io.Discard})
	e := sampleEntry()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := l.Next()
		e := *e
		for pb.Next() {
			s.Write(&e)
		}
	})
	l.Close()
	b.StopTimer()
	b.ReportMetric(float64(l.Dropped())/float64(b.N), "dropped/op")
}

// BenchmarkShardWrite is the request path alone: a connection's Write
// (lock, time, formatting into the shard's buffer), with the writer
// stopped and the buffer emptied by hand before it fills, so that no line
// is handed over or dropped.
func BenchmarkShardWrite(b *testing.B) {
	l, _ := Open(Options{Writer: io.Discard})
	l.Close()
	s := l.Next()
	e := sampleEntry()
	const perBuffer = 100 // lines of about 350 bytes: well under a buffer
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if i%perBuffer == 0 {
			s.buf = s.buf[:0]
		}
		s.Write(e)
	}
}
