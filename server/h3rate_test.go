package server

import (
	"errors"
	"os"
	"testing"
	"time"
)

// TestH3BodyMinRate: an HTTP/3 body trickled slower than BodyMinRate is
// answered 408, as over HTTP/1.1 and HTTP/2 (TestH2BodyMinRate), and the
// handler's read fails with a deadline error. Before the fix only Idle
// bounded an HTTP/3 body, so a trickle that beat Idle between bytes kept
// the stream and its handler for ever. Once the response has begun, the
// rate no longer applies, as on HTTP/2.
func TestH3BodyMinRate(t *testing.T) {
	h := rateHandler{errs: make(chan error, 1)}
	o := Options{Timeouts: Timeouts{BodyMinRate: 1 << 10, BodyRateWindow: 300 * time.Millisecond, Idle: 10 * time.Second}}
	_, p, addr := startH3(t, h, o, HTTP3Options{})
	c := h3RawDial(t, addr, h3RawTLS(p), nil)
	for _, path := range []string{"/upload", "/committed"} {
		t.Run(path, func(t *testing.T) {
			st, err := c.OpenStream()
			if err != nil {
				t.Fatal(err)
			}
			type end struct {
				status string
				err    error
			}
			ended := make(chan end, 1)
			go func() {
				status, _, err := h3RawResponse(st)
				ended <- end{status, err}
			}()
			st.Write(h3RawHeaders(":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", path))
			// A committed stream must outlive five rate windows; an
			// uncommitted one must end within 3 s.
			bound := 3 * time.Second
			if path == "/committed" {
				bound = 5 * o.Timeouts.BodyRateWindow
			}
			start := time.Now()
			var e end
			ok := false
		trickle:
			for time.Since(start) < bound {
				st.Write(h3RawData([]byte{'x'})) // 20 bytes a second
				select {
				case e = <-ended:
					ok = true
					break trickle
				case <-time.After(50 * time.Millisecond):
				}
			}
			switch path {
			case "/upload":
				if !ok {
					st.CancelWrite(h3RequestCancelled)
					st.CancelRead(h3RequestCancelled)
					t.Fatal("a trickled body was not ended within 3 s")
				}
				if e.status != "408" {
					t.Fatalf("trickled body answered %q (%v), want 408", e.status, e.err)
				}
			case "/committed":
				if ok {
					t.Fatalf("a stream whose response had begun was ended (%q %v) by the body's rate", e.status, e.err)
				}
				st.Close()
				select {
				case e = <-ended:
					if e.status != "200" || e.err != nil {
						t.Fatalf("committed stream ended %q %v", e.status, e.err)
					}
				case <-time.After(testTimeout):
					t.Fatal("committed stream did not end after the body's end")
				}
			}
			select {
			case err := <-h.errs:
				switch {
				case path == "/committed" && err != nil:
					t.Fatalf("committed stream's body read failed: %v", err)
				case path == "/upload" && (!errors.Is(err, os.ErrDeadlineExceeded) || StatusFor(err) != 408):
					t.Fatalf("handler's body error %v, want a deadline error (408)", err)
				}
			case <-time.After(testTimeout):
				t.Fatal("the handler's body read did not end")
			}
		})
	}
}
