package server

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
)

// The body's minimum rate (issue 18, item 3): a body trickled below
// BodyMinRate is answered 408 once the window and its bytes' credit are
// spent, though every byte restarts Idle; a slow body above the rate is
// served.

const (
	// rateTestMin and rateTestWindow are the tests' minimum rate and
	// window: short, so that a trickle fails quickly.
	rateTestMin    = 1000
	rateTestWindow = 500 * time.Millisecond
	// trickleEvery is the trickling client's pause between bytes (10 B/s,
	// a hundredth of the minimum rate); each pause is far below Idle.
	trickleEvery = 100 * time.Millisecond
	// trickleFor bounds the trickle: the server must have answered long
	// before (window + tick of the loop's scan, about 0.7 s).
	trickleFor = 8 * time.Second
)

// rateTestOptions has an Idle timeout far beyond the test's duration, so
// only the rate can end a trickle.
func rateTestOptions() Options {
	return Options{Timeouts: Timeouts{Idle: time.Minute, BodyMinRate: rateTestMin, BodyRateWindow: rateTestWindow}}
}

// trickleBodies are the ways a body reaches a handler: waited for on the
// loop (small Content-Length), read on a goroutine straight from the
// stream (large Content-Length; the loop hands it off), decoded in the
// read buffer (chunked).
var trickleBodies = []struct {
	name, head string
	unit       string // what each trickled write sends
}{
	{"small content-length", "POST /t HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n", "x"},
	{"large content-length", "POST /t HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n", "x"},
	{"chunked", "POST /t HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", "1\r\nx\r\n"},
}

// statusEcho answers a body error with StatusFor, as router.Echo does, and
// a body with its length. It is inline: the loop runs it once a small body
// is buffered.
var statusEcho = Inline(HandlerFunc(func(w *ResponseWriter, r *Request) {
	b, err := r.BodyBytes()
	if err != nil {
		w.WriteHeader(StatusFor(err))
		w.SetClose()
		return
	}
	fmt.Fprintf(w, "%d", len(b))
}))

func TestTrickledBodyGets408(t *testing.T) {
	_, addr := startTCP(t, statusEcho, rateTestOptions())
	for _, tc := range trickleBodies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, took, err := testnet.Trickle(t, addr, tc.head, tc.unit, trickleEvery, trickleFor)
			if err != nil {
				t.Fatalf("no answer while trickling for %v: %v", trickleFor, err)
			}
			if status != 408 {
				t.Errorf("status %d, want 408", status)
			}
			if took < rateTestWindow {
				t.Errorf("answered after %v, before the %v window", took, rateTestWindow)
			}
			t.Logf("408 after %v", took)
		})
	}
}

// TestSlowBodyAboveRateServed: bodies sent at twice the minimum rate for
// four windows are served whole.
func TestSlowBodyAboveRateServed(t *testing.T) {
	const (
		size  = 4000
		step  = 200 // bytes per write: 2,000 B/s at trickleEvery
		steps = size / step
	)
	_, addr := startTCP(t, statusEcho, rateTestOptions())
	for _, chunked := range []bool{false, true} {
		t.Run(fmt.Sprintf("chunked=%v", chunked), func(t *testing.T) {
			t.Parallel()
			c := dial(t, addr)
			head := fmt.Sprintf("POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
			if chunked {
				head = "POST /s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
			}
			io.WriteString(c, head)
			part := strings.Repeat("y", step)
			if chunked {
				part = fmt.Sprintf("%x\r\n%s\r\n", step, part)
			}
			for range steps {
				time.Sleep(trickleEvery)
				if _, err := io.WriteString(c, part); err != nil {
					t.Fatalf("write: %v", err)
				}
			}
			if chunked {
				io.WriteString(c, "0\r\n\r\n")
			}
			resp, body := readResponse(t, bufio.NewReader(c), "POST")
			if resp.StatusCode != 200 || body != fmt.Sprint(size) {
				t.Fatalf("got %d %q, want 200 %q", resp.StatusCode, body, fmt.Sprint(size))
			}
		})
	}
}

func TestRateAllowance(t *testing.T) {
	tm := &Timeouts{BodyMinRate: 1000, BodyRateWindow: 2 * time.Second}
	for _, tc := range []struct {
		got  int64
		want time.Duration
	}{
		{0, 2 * time.Second},
		{1, 2*time.Second + time.Millisecond},
		{1500, 3500 * time.Millisecond},
		{1 << 62, maxRateSeconds * time.Second}, // capped, no overflow
	} {
		if a := rateAllowance(tc.got, tm); a != tc.want {
			t.Errorf("rateAllowance(%d) = %v, want %v", tc.got, a, tc.want)
		}
	}
	var o Options
	o.normalize()
	if o.Timeouts.BodyMinRate != DefaultBodyMinRate || o.Timeouts.BodyRateWindow != DefaultBodyRateWindow {
		t.Errorf("defaults %+v", o.Timeouts)
	}
	for _, tm := range []Timeouts{{BodyMinRate: -1}, {BodyRateWindow: -1}} {
		o := Options{Timeouts: tm}
		o.normalize()
		if o.Timeouts.BodyMinRate != 0 {
			t.Errorf("%+v: the check stays on (%d B/s)", tm, o.Timeouts.BodyMinRate)
		}
	}
}
