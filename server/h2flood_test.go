package server

import (
	"crypto/tls"
	"errors"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/simdedge/simdedge/server/edgetls"
)

// h2Dialer opens a raw HTTP/2 client connection to the server under test.
type h2Dialer func(t *testing.T, s ...http2.Setting) *h2raw

// h2Both runs f against h served with o over h2c and over h2 with TLS
// (ALPN), on the test engine.
func h2Both(t *testing.T, h Handler, o Options, f func(t *testing.T, dial h2Dialer)) {
	t.Run("h2c", func(t *testing.T) {
		_, addr := startH2C(t, h, o)
		f(t, func(t *testing.T, s ...http2.Setting) *h2raw { return dialH2(t, addr, s...) })
	})
	t.Run("tls", func(t *testing.T) {
		p := newPKI(t)
		_, addr := startTLSWith(t, h, o, edgetls.Options{Certificates: certFiles(p.a), ALPN: []string{"h2", "http/1.1"}})
		f(t, func(t *testing.T, s ...http2.Setting) *h2raw {
			tc := tls.Client(dial(t, addr), &tls.Config{RootCAs: p.ca.Pool, ServerName: "a.example", NextProtos: []string{"h2"}})
			if err := tc.Handshake(); err != nil {
				t.Fatal(err)
			}
			if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
				t.Fatalf("ALPN chose %q", p)
			}
			return startH2Raw(t, tc, s...)
		})
	})
}

// goAwayWatch reads frames on a goroutine until GOAWAY or the end of the
// connection; seen turns true then, and code delivers the GOAWAY's code
// (-1: the connection ended without one).
func goAwayWatch(c *h2raw) (seen *atomic.Bool, code chan http2.ErrCode) {
	seen, code = new(atomic.Bool), make(chan http2.ErrCode, 1)
	go func() {
		var got http2.ErrCode = ^http2.ErrCode(0)
		for {
			f, err := c.fr.ReadFrame()
			if err != nil {
				break
			}
			if g, ok := f.(*http2.GoAwayFrame); ok {
				got = g.ErrCode
				break
			}
		}
		seen.Store(true)
		code <- got
	}()
	return seen, code
}

// waitCode waits up to d for a GOAWAY's code.
func waitCode(t *testing.T, code chan http2.ErrCode, d time.Duration, what string) http2.ErrCode {
	t.Helper()
	select {
	case c := <-code:
		return c
	case <-time.After(d):
		t.Fatalf("%s: no GOAWAY within %v", what, d)
		return 0
	}
}

// TestH2IdleFrameFloods (CVE-2019-9518 and kin): each flood of frames
// that make no progress ends with GOAWAY ENHANCE_YOUR_CALM once the
// MaxIdleFrames budget is spent, long before the flood's end; before the
// fix the empty CONTINUATION, empty DATA and WINDOW_UPDATE floods kept the
// connection busy for as long as the client liked.
func TestH2IdleFrameFloods(t *testing.T) {
	const budget = 100
	const attempts = 300000 // bounds each flood; a budget of 100 needs a few hundred
	floods := []struct {
		name  string
		setup func(c *h2raw)
		frame func(c *h2raw) error
	}{
		{"empty CONTINUATION", func(c *h2raw) {
			c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: c.block("GET", "/")})
		}, func(c *h2raw) error { return c.fr.WriteContinuation(1, false, nil) }},
		{"empty DATA", func(c *h2raw) {
			c.headers(1, false, c.block("POST", "/echo"))
		}, func(c *h2raw) error { return c.fr.WriteData(1, false, nil) }},
		{"padding-only DATA", func(c *h2raw) {
			c.headers(1, false, c.block("POST", "/echo"))
		}, func(c *h2raw) error { return c.fr.WriteDataPadded(1, false, nil, []byte{0, 0, 0}) }},
		{"WINDOW_UPDATE +1", nil, func(c *h2raw) error { return c.fr.WriteWindowUpdate(0, 1) }},
		{"PRIORITY", func(c *h2raw) {
			c.headers(1, true, c.block("GET", "/"))
		}, func(c *h2raw) error {
			return c.fr.WritePriority(1, http2.PriorityParam{StreamDep: 0, Weight: 15})
		}},
		{"PING", nil, func(c *h2raw) error { return c.fr.WritePing(false, [8]byte{}) }},
		{"unknown type", nil, func(c *h2raw) error { return c.fr.WriteRawFrame(0xfa, 0, 0, nil) }},
	}
	h2Both(t, h2Handler(), Options{HTTP2: HTTP2Limits{MaxIdleFrames: budget}}, func(t *testing.T, dial h2Dialer) {
		for _, fl := range floods {
			t.Run(fl.name, func(t *testing.T) {
				c := dial(t)
				seen, code := goAwayWatch(c)
				if fl.setup != nil {
					fl.setup(c)
				}
				sent, start := 0, time.Now()
				for ; sent < attempts && !seen.Load(); sent++ {
					if fl.frame(c) != nil {
						break // the server hung up
					}
				}
				if got := waitCode(t, code, 3*time.Second, fl.name); got != http2.ErrCodeEnhanceYourCalm {
					t.Fatalf("GOAWAY %v after %d frames, want ENHANCE_YOUR_CALM", got, sent)
				}
				if sent >= attempts {
					t.Fatalf("the server read all %d frames before GOAWAY", sent)
				}
				t.Logf("GOAWAY after %d frames written, %v", sent, time.Since(start))
			})
		}
	})
}

// TestH2ContinuationCount (CVE-2024-28182): a header block may have
// MaxContinuations CONTINUATION frames, however small; one more ends the
// connection with ENHANCE_YOUR_CALM. Before the fix only the block's size
// was bounded, so a block of one-byte fragments took 68 K frames.
func TestH2ContinuationCount(t *testing.T) {
	const conts = 5
	h2Both(t, h2Handler(), Options{HTTP2: HTTP2Limits{MaxContinuations: conts}}, func(t *testing.T, dial h2Dialer) {
		// The whole block in HEADERS plus conts CONTINUATIONs is served.
		c := dial(t)
		blk := c.block("GET", "/")
		step := (len(blk) + conts) / (conts + 1)
		c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk[:step]})
		for i, at := 0, step; i < conts; i, at = i+1, at+step {
			end := min(at+step, len(blk))
			if i == conts-1 {
				end = len(blk)
			}
			c.fr.WriteContinuation(1, i == conts-1, blk[at:end])
		}
		if status, _ := c.waitStream(1); status != "200" {
			t.Fatalf("block in %d CONTINUATIONs: %q", conts, status)
		}

		// One CONTINUATION more than that ends the connection at once.
		c = dial(t)
		_, code := goAwayWatch(c)
		c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk[:1]})
		for i := 0; i <= conts; i++ {
			c.fr.WriteContinuation(1, false, blk[1+i:2+i])
		}
		if got := waitCode(t, code, 3*time.Second, "one CONTINUATION too many"); got != http2.ErrCodeEnhanceYourCalm {
			t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", got)
		}
	})
}

// TestH2LegitimateNotCalmed: with the default budget, a client that
// sends thousands of requests (each with a PRIORITY and a WINDOW_UPDATE,
// as browsers do), uploads in thousands of one-byte DATA frames and
// downloads megabytes (acknowledging every frame) is never cut off.
func TestH2LegitimateNotCalmed(t *testing.T) {
	h2Both(t, h2Handler(), Options{}, func(t *testing.T, dial h2Dialer) {
		c := dial(t)
		c.fr.WriteWindowUpdate(0, 1<<30) // as browsers do
		id := uint32(1)
		for i := 0; i < 3*DefaultH2MaxIdleFrames; i++ {
			c.headers(id, true, c.block("GET", "/"))
			c.fr.WritePriority(id, http2.PriorityParam{Weight: 200})
			c.fr.WriteWindowUpdate(0, 1)
			if status, _ := c.waitStream(id); status != "200" {
				t.Fatalf("request %d: %q", i, status)
			}
			id += 2
		}
		// An upload of many one-byte DATA frames.
		const parts = 3 * DefaultH2MaxIdleFrames
		c.headers(id, false, c.block("POST", "/echo"))
		for i := 0; i < parts; i++ {
			c.fr.WriteData(id, i == parts-1, []byte{'x'})
		}
		if status, _ := c.waitStream(id); status != "200" {
			t.Fatalf("upload in %d frames: %q", parts, status)
		}
		// Downloads, acknowledging each DATA frame with two updates.
		for n := 0; n < 3; n++ {
			id += 2
			c.headers(id, true, c.block("GET", "/big"))
			got := 0
			for got < h2BigSize {
				f := c.read()
				if g, ok := f.(*http2.GoAwayFrame); ok {
					t.Fatalf("GOAWAY %v during download %d", g.ErrCode, n)
				}
				if d, ok := f.(*http2.DataFrame); ok && d.StreamID == id && len(d.Data()) > 0 {
					got += len(d.Data())
					c.fr.WriteWindowUpdate(0, uint32(len(d.Data())))
					c.fr.WriteWindowUpdate(id, uint32(len(d.Data())))
				}
			}
		}
		id += 2
		c.headers(id, true, c.block("GET", "/"))
		if status, _ := c.waitStream(id); status != "200" {
			t.Fatalf("last request: %q", status)
		}
	})
}

// rateHandler reads the request body, after committing its response when
// the path is /committed, and reports the body's error.
type rateHandler struct{ errs chan error }

func (h rateHandler) ServeEdge(w *ResponseWriter, r *Request) {
	if string(r.Target()) == "/committed" {
		w.WriteHeader(200)
		w.Flush()
	}
	_, err := io.Copy(io.Discard, r.Body())
	select {
	case h.errs <- err:
	default:
	}
}

// rateTrickle sends a body byte with write every 50 ms (20 bytes a
// second) until the stream ends (ended) or, for /upload, 3 s pass, for
// /committed five rate windows: a committed stream must outlive them, an
// uncommitted one must end within 3 s. ok: the stream ended.
func rateTrickle[E any](path string, o Options, write func(), ended <-chan E) (e E, ok bool) {
	bound := 3 * time.Second
	if path == "/committed" {
		bound = 5 * o.Timeouts.BodyRateWindow
	}
	start := time.Now()
	for time.Since(start) < bound {
		write()
		select {
		case e = <-ended:
			return e, true
		case <-time.After(50 * time.Millisecond):
		}
	}
	return e, false
}

// rateCheckEnd checks how a trickled stream ended (ok: it did, answered
// status, with detail): /upload with a 408, /committed not at all.
func rateCheckEnd(t *testing.T, path string, ok bool, status string, detail any) {
	t.Helper()
	switch {
	case path == "/upload" && !ok:
		t.Fatal("a trickled body was not ended within 3 s")
	case path == "/upload" && status != "408":
		t.Fatalf("trickled body answered %q (%v), want 408", status, detail)
	case path == "/committed" && ok:
		t.Fatalf("a stream whose response had begun was ended (%q %v) by the body's rate", status, detail)
	}
}

// check checks the handler's body error for path: none for /committed, a
// deadline error (408) for /upload.
func (h rateHandler) check(t *testing.T, path string) {
	t.Helper()
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
}

// TestH2BodyMinRate: an HTTP/2 body trickled slower than BodyMinRate is
// answered 408, as over HTTP/1.1, and the handler's read fails with a
// deadline error. Before the fix a trickle that beat Idle between bytes
// kept the stream for ever. Once the response has begun, the rate no
// longer applies (a gRPC bidi stream, a server-streaming answer: the
// stream is a conversation, bounded by Idle between reads).
func TestH2BodyMinRate(t *testing.T) {
	h := rateHandler{errs: make(chan error, 1)}
	o := Options{Timeouts: Timeouts{BodyMinRate: 1 << 10, BodyRateWindow: 300 * time.Millisecond, Idle: 10 * time.Second}}
	h2Both(t, h, o, func(t *testing.T, dial h2Dialer) {
		for _, path := range []string{"/upload", "/committed"} {
			t.Run(path, func(t *testing.T) {
				c := dial(t)
				type end struct {
					status string
					code   http2.ErrCode
				}
				ended := make(chan end, 1)
				go func() {
					// Not waitStream: no t.Fatal off the test's goroutine.
					var e end
					for {
						f, err := c.fr.ReadFrame()
						if err != nil || f.Header().StreamID != 1 {
							if err != nil {
								ended <- e
								return
							}
							continue
						}
						switch f := f.(type) {
						case *http2.MetaHeadersFrame:
							e.status = f.PseudoValue("status")
							if f.StreamEnded() {
								ended <- e
								return
							}
						case *http2.DataFrame:
							if f.StreamEnded() {
								ended <- e
								return
							}
						case *http2.RSTStreamFrame:
							e.code = f.ErrCode
							ended <- e
							return
						}
					}
				}()
				c.headers(1, false, c.block("POST", path))
				e, ok := rateTrickle(path, o, func() { c.fr.WriteData(1, false, []byte{'x'}) }, ended)
				rateCheckEnd(t, path, ok, e.status, e.code)
				if path == "/committed" {
					c.fr.WriteData(1, true, nil)
				}
				h.check(t, path)
			})
		}
	})
}

// TestH2ReadHeader: a header block left open is ended (GOAWAY, then close)
// after ReadHeader, as an HTTP/1.1 head is, whether or not other streams
// are open; so is a connection that sends no request after its preface.
// An established connection waits Idle. Before the fix only Idle (or
// nothing, with a stream open) ended them.
func TestH2ReadHeader(t *testing.T) {
	o := Options{Timeouts: Timeouts{ReadHeader: 300 * time.Millisecond, Idle: 10 * time.Second}}
	h2Both(t, h2Handler(), o, func(t *testing.T, dial h2Dialer) {
		for _, tc := range []struct {
			name string
			do   func(c *h2raw)
		}{
			{"open block", func(c *h2raw) {
				c.headers(1, true, c.block("GET", "/"))
				c.waitStream(1)
				c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: c.block("GET", "/")})
			}},
			{"open block beside a stream", func(c *h2raw) {
				c.headers(1, false, c.block("POST", "/echo"))
				c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: c.block("GET", "/")})
			}},
			{"no request", func(c *h2raw) {}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				start := time.Now() // ReadHeader runs from the preface at the earliest
				c := dial(t)
				tc.do(c)
				_, code := goAwayWatch(c)
				waitCode(t, code, 3*time.Second, tc.name)
				if d := time.Since(start); d < 250*time.Millisecond {
					t.Fatalf("ended after %v, before ReadHeader", d)
				}
			})
		}
		t.Run("established", func(t *testing.T) {
			c := dial(t)
			c.headers(1, true, c.block("GET", "/"))
			c.waitStream(1)
			time.Sleep(600 * time.Millisecond) // twice ReadHeader
			c.fr.WritePing(false, [8]byte{1})
			for {
				f := c.read()
				if g, ok := f.(*http2.GoAwayFrame); ok {
					t.Fatalf("established connection got GOAWAY %v", g.ErrCode)
				}
				if p, ok := f.(*http2.PingFrame); ok && p.IsAck() {
					break
				}
			}
		})
	})
}

// TestH2IdleAfterHandler: a connection whose last stream was served on a
// goroutine is closed after Idle like any other: the reader, which waited
// without a deadline while the stream was open, is given one when the
// stream closes.
func TestH2IdleAfterHandler(t *testing.T) {
	o := Options{Timeouts: Timeouts{Idle: 300 * time.Millisecond}}
	h2Both(t, h2Handler(), o, func(t *testing.T, dial h2Dialer) {
		c := dial(t)
		c.headers(1, false, c.block("POST", "/echo"))
		c.fr.WriteData(1, true, []byte("hi"))
		if status, _ := c.waitStream(1); status != "200" {
			t.Fatalf("echo: %q", status)
		}
		start := time.Now()
		_, code := goAwayWatch(c)
		if got := waitCode(t, code, 3*time.Second, "idle after a goroutine stream"); got != http2.ErrCodeNo {
			t.Fatalf("GOAWAY %v, want NO_ERROR", got)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("idle connection closed after %v", d)
		}
	})
}

// TestH2IdleIgnoresPings: Idle counts from the last stream's end; PINGs
// (or any frame that opens no stream) do not keep an idle connection, as
// they do not an HTTP/1.1 one (and as in Go's server). Before the fix each
// frame restarted Idle, so a PING every few seconds held a connection for
// ever.
func TestH2IdleIgnoresPings(t *testing.T) {
	o := Options{Timeouts: Timeouts{Idle: 400 * time.Millisecond}}
	h2Both(t, h2Handler(), o, func(t *testing.T, dial h2Dialer) {
		c := dial(t)
		c.headers(1, true, c.block("GET", "/"))
		if status, _ := c.waitStream(1); status != "200" {
			t.Fatalf("GET: %q", status)
		}
		seen, code := goAwayWatch(c)
		start := time.Now()
		for time.Since(start) < 3*time.Second && !seen.Load() {
			if c.fr.WritePing(false, [8]byte{2}) != nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got := waitCode(t, code, time.Second, "idle connection sending PINGs"); got != http2.ErrCodeNo {
			t.Fatalf("GOAWAY %v, want NO_ERROR", got)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("closed after %v of PINGs, Idle is 400ms", d)
		}
	})
}
