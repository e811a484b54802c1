package procstat

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	// A real line from this machine, with a command name containing a space
	// and a parenthesis substituted in to check the last-')' rule.
	const line = "22865 (ngi) nx) S 22860 22865 22860 0 -1 4194560 211 0 0 0 37 12 0 0 20 0 1 0 4306312 11059200 368 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0\n"
	s, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if s.ppid != 22860 || s.cpu != (37+12)*tick {
		t.Errorf("parseStat = %+v", s)
	}
	for _, bad := range []string{"", "1 (x) S 2", "1 x S 2 3 4 5 6 7 8 9 10 11 12 13 14", "1 (x) S a 3 4 5 6 7 8 9 10 11 12 13 14"} {
		if _, err := parseStat(bad); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

// TestTreeCPUTimeFake builds a fake /proc with a parent, a child, a
// grandchild and an unrelated process.
func TestTreeCPUTimeFake(t *testing.T) {
	dir := t.TempDir()
	write := func(pid, ppid, ut, st int) {
		d := filepath.Join(dir, strconv.Itoa(pid))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		line := strconv.Itoa(pid) + " (p) S " + strconv.Itoa(ppid) + " 0 0 0 -1 0 0 0 0 0 " + strconv.Itoa(ut) + " " + strconv.Itoa(st) + " 0 0\n"
		if err := os.WriteFile(filepath.Join(d, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(10, 1, 1, 2)
	write(11, 10, 3, 4)
	write(12, 11, 5, 6)
	write(13, 1, 100, 100)
	if err := os.MkdirAll(filepath.Join(dir, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := treeCPUTime(dir, 10)
	if err != nil {
		t.Fatal(err)
	}
	if want := (1 + 2 + 3 + 4 + 5 + 6) * tick; got != want {
		t.Errorf("treeCPUTime = %v, want %v", got, want)
	}
	if _, err := treeCPUTime(dir, 99); err == nil {
		t.Error("missing pid: no error")
	}
}

func TestCPUTimeSelfGrows(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc")
	}
	before, err := TreeCPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until the counter moves by at least two ticks (bounded).
	deadline := time.Now().Add(10 * time.Second)
	x := 0
	for time.Now().Before(deadline) {
		for i := range 1_000_000 {
			x += i
		}
		after, err := CPUTime(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if after-before >= 2*tick {
			return
		}
	}
	t.Errorf("CPU time did not grow in 10 s of busy loop (x=%d)", x)
}

func TestParseSystemBusy(t *testing.T) {
	got, err := parseSystemBusy("cpu  3036179 5 1198814 1429970 8553 7 187218 11 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
	want := time.Duration(3036179+5+1198814+7+187218+11) * tick
	if err != nil || got != want {
		t.Errorf("parseSystemBusy = %v, %v; want %v", got, err, want)
	}
	if _, err := parseSystemBusy("cpu0 1 2 3\n"); err == nil {
		t.Error("bad /proc/stat accepted")
	}
	if b, err := SystemBusy(); err != nil || b <= 0 {
		t.Errorf("SystemBusy = %v, %v", b, err)
	}
}
