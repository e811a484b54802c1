package progress

import (
	"strings"
	"testing"
	"time"
)

// fakeClock lets the test control elapsed time.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func newTestBar(sb *strings.Builder) (*Bar, *fakeClock) {
	c := &fakeClock{t: time.Unix(0, 0)}
	b := &Bar{w: sb, now: c.now, stop: make(chan struct{})}
	b.start = c.now()
	return b, c
}

func TestEstimateScalesWithObservedSpeed(t *testing.T) {
	var sb strings.Builder
	b, c := newTestBar(&sb)
	b.AddPlan(100)
	if got := b.Left(); got != 100*time.Second {
		t.Errorf("left before any work = %v", got)
	}
	// The first 10 planned seconds took 20 real seconds: twice slower.
	c.t = c.t.Add(20 * time.Second)
	b.Done(10)
	if got := b.Left(); got != 180*time.Second {
		t.Errorf("left = %v, want 3m0s", got)
	}
	if got := b.Planned(); got != 90*time.Second {
		t.Errorf("planned = %v, want the unscaled 1m30s", got)
	}
	// Scale is bounded.
	c.t = c.t.Add(1000 * time.Second)
	if got := b.Left(); got != time.Duration(90*maxScale)*time.Second {
		t.Errorf("left = %v, want bounded by maxScale", got)
	}
}

func TestDoneNeverExceedsPlan(t *testing.T) {
	var sb strings.Builder
	b, _ := newTestBar(&sb)
	b.AddPlan(5)
	b.Done(10)
	if b.Left() != 0 || !strings.Contains(b.Line(), "100%") {
		t.Errorf("line = %q", b.Line())
	}
}

func TestPlainOutput(t *testing.T) {
	var sb strings.Builder
	b, c := newTestBar(&sb)
	b.AddPlan(10)
	b.Set("micro", "BenchmarkJSON/twitter/fastjson")
	b.Set("micro", "BenchmarkJSON/twitter/encoding_json") // same area, too soon: no line
	c.t = c.t.Add(plainEvery)
	b.Done(1)
	b.Set("load", "nginx")
	out := sb.String()
	if strings.Contains(out, "\r") || strings.Contains(out, "\x1b") {
		t.Errorf("control characters in plain output: %q", out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("got %d lines, want 3:\n%s", len(lines), out)
	}
	if !strings.Contains(lines[0], "micro: BenchmarkJSON/twitter/fastjson") || !strings.Contains(lines[2], "load: nginx") {
		t.Errorf("lines = %q", lines)
	}
	if !strings.Contains(lines[2], "elapsed 5s") {
		t.Errorf("elapsed missing: %q", lines[2])
	}
}

func TestTTYRedrawsInPlace(t *testing.T) {
	var sb strings.Builder
	b, _ := newTestBar(&sb)
	b.tty = true
	b.AddPlan(10)
	b.Set("asm", "Classify")
	b.Logf("note: %s", "x")
	out := sb.String()
	if !strings.HasPrefix(out, "\r[") || !strings.Contains(out, "\x1b[K") || !strings.Contains(out, "note: x\n") {
		t.Errorf("tty output = %q", out)
	}
}

func TestShort(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                "0s",
		42 * time.Second: "42s",
		65 * time.Second: "1m05s",
		10 * time.Minute: "10m00s",
	} {
		if got := short(d); got != want {
			t.Errorf("short(%v) = %q, want %q", d, got, want)
		}
	}
}
