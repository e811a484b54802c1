package server

import (
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/h3test"
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
	c := h3test.Dial(t, addr, h3RawTLS(p), nil)
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
				status, _, err := h3test.Response(st)
				ended <- end{status, err}
			}()
			st.Write(h3test.Headers(":method", "POST", ":scheme", "https", ":authority", "a.example", ":path", path))
			e, ok := rateTrickle(path, o, func() { st.Write(h3test.Data([]byte{'x'})) }, ended)
			rateCheckEnd(t, path, ok, e.status, e.err)
			if path == "/committed" {
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
			h.check(t, path)
		})
	}
}
