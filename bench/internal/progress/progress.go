package progress

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

const (
	barWidth = 24
	// plainEvery limits plain-mode output to one line per interval unless
	// the area changes.
	plainEvery = 5 * time.Second
	// tickEvery is how often a terminal line is redrawn to move the clock.
	tickEvery = time.Second
	// Bounds on the correction factor applied to the planned time left:
	// early in a run one slow item must not multiply the estimate wildly.
	minScale, maxScale = 0.25, 4.0
)

// Bar tracks planned work in estimated seconds. The caller adds the plan
// up front (AddPlan), marks work done as it happens (Done) and names what
// is running (Set). The estimate of the time left is the planned work left,
// scaled by how fast the planned work has gone so far.
type Bar struct {
	mu        sync.Mutex
	w         io.Writer
	tty       bool
	now       func() time.Time
	start     time.Time
	plan      float64
	done      float64
	area      string
	item      string
	lastPlain time.Time
	lastArea  string
	stop      chan struct{}
	stopped   sync.Once
}

// IsTerminal reports whether f is a character device (a terminal).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// New returns a bar writing to w; tty selects in-place redrawing. Call
// Close when done.
func New(w io.Writer, tty bool) *Bar {
	b := &Bar{w: w, tty: tty, now: time.Now, stop: make(chan struct{})}
	b.start = b.now()
	if tty {
		go b.tick()
	}
	return b
}

func (b *Bar) tick() {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.mu.Lock()
			b.draw()
			b.mu.Unlock()
		}
	}
}

// AddPlan adds estimated seconds of work to the plan (negative to remove
// work that will not run).
func (b *Bar) AddPlan(sec float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.plan += sec
	if b.plan < b.done {
		b.plan = b.done
	}
}

// Done marks sec planned seconds as completed.
func (b *Bar) Done(sec float64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += sec
	if b.done > b.plan {
		b.done = b.plan
	}
	b.draw()
}

// Set names the running area and item.
func (b *Bar) Set(area, item string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.area, b.item = area, item
	b.draw()
}

// Logf prints a message on its own line without breaking the bar.
func (b *Bar) Logf(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tty {
		fmt.Fprint(b.w, "\r\x1b[K")
	}
	fmt.Fprintf(b.w, format+"\n", args...)
	if b.tty {
		b.draw()
	}
}

// Close stops redrawing and ends the line.
func (b *Bar) Close() {
	b.stopped.Do(func() {
		close(b.stop)
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.tty {
			b.draw()
			fmt.Fprintln(b.w)
		}
	})
}

// Planned is the planned time not yet done, unscaled by the pace so far.
func (b *Bar) Planned() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return time.Duration((b.plan - b.done) * float64(time.Second))
}

// Left estimates the time left.
func (b *Bar) Left() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.left(b.now().Sub(b.start))
}

func (b *Bar) left(elapsed time.Duration) time.Duration {
	rest := b.plan - b.done
	scale := 1.0
	if b.done > 0 {
		scale = min(max(elapsed.Seconds()/b.done, minScale), maxScale)
	}
	return time.Duration(rest * scale * float64(time.Second))
}

// Line renders the status line (without control characters).
func (b *Bar) Line() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.line(b.now().Sub(b.start))
}

func (b *Bar) line(elapsed time.Duration) string {
	frac := 0.0
	if b.plan > 0 {
		frac = b.done / b.plan
	}
	n := int(frac * barWidth)
	bar := strings.Repeat("#", n) + strings.Repeat(".", barWidth-n)
	what := b.area
	if b.item != "" {
		what += ": " + b.item
	}
	return fmt.Sprintf("[%s] %3.0f%%  %s  elapsed %s  left ~%s", bar, frac*100, what,
		short(elapsed), short(b.left(elapsed)))
}

// draw writes the line; b.mu is held.
func (b *Bar) draw() {
	now := b.now()
	l := b.line(now.Sub(b.start))
	if b.tty {
		fmt.Fprint(b.w, "\r"+l+"\x1b[K")
		return
	}
	if b.area != b.lastArea || now.Sub(b.lastPlain) >= plainEvery {
		fmt.Fprintln(b.w, l)
		b.lastPlain, b.lastArea = now, b.area
	}
}

// short formats d to the second ("1m05s", "42s").
func short(d time.Duration) string {
	d = d.Round(time.Second)
	if d < time.Minute {
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}
