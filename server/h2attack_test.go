package server

import (
	"bytes"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2raw is a test client that writes frames by hand (x/net's Framer),
// so that it can misbehave.
type h2raw struct {
	t   *testing.T
	c   net.Conn
	fr  *http2.Framer
	enc *hpack.Encoder
	buf bytes.Buffer
}

// dialH2 opens an h2c connection: preface, SETTINGS (extra settings s),
// and reads until the server's SETTINGS.
func dialH2(t *testing.T, addr string, s ...http2.Setting) *h2raw {
	t.Helper()
	return startH2Raw(t, dial(t, addr), s...)
}

// startH2Raw is dialH2 on a connection c already open (h2 over TLS).
func startH2Raw(t *testing.T, c net.Conn, s ...http2.Setting) *h2raw {
	t.Helper()
	h := &h2raw{t: t, c: c, fr: http2.NewFramer(c, c)}
	h.enc = hpack.NewEncoder(&h.buf)
	h.fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	io.WriteString(c, h2Preface)
	h.fr.WriteSettings(s...)
	for {
		f := h.read()
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			h.fr.WriteSettingsAck()
			return h
		}
	}
}

func (h *h2raw) read() http2.Frame {
	h.t.Helper()
	f, err := h.fr.ReadFrame()
	if err != nil {
		h.t.Fatalf("reading a frame: %v", err)
	}
	return f
}

// block encodes a request head.
func (h *h2raw) block(method, path string, extra ...string) []byte {
	h.buf.Reset()
	h.enc.WriteField(hpack.HeaderField{Name: ":method", Value: method})
	h.enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: "http"})
	h.enc.WriteField(hpack.HeaderField{Name: ":path", Value: path})
	h.enc.WriteField(hpack.HeaderField{Name: ":authority", Value: "a.example"})
	for i := 0; i+1 < len(extra); i += 2 {
		h.enc.WriteField(hpack.HeaderField{Name: extra[i], Value: extra[i+1]})
	}
	return append([]byte(nil), h.buf.Bytes()...)
}

func (h *h2raw) headers(id uint32, end bool, block []byte) {
	h.t.Helper()
	if err := h.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block, EndStream: end, EndHeaders: true}); err != nil {
		h.t.Fatal(err)
	}
}

// waitGoAway reads frames until GOAWAY (returning its code) or the
// connection ends (returning -1).
func (h *h2raw) waitGoAway() http2.ErrCode {
	h.t.Helper()
	for {
		f, err := h.fr.ReadFrame()
		if err != nil {
			return ^http2.ErrCode(0)
		}
		if g, ok := f.(*http2.GoAwayFrame); ok {
			return g.ErrCode
		}
	}
}

// waitStream reads frames until one for stream id that ends it: its
// response status (0 if reset) and the reset code.
func (h *h2raw) waitStream(id uint32) (status string, code http2.ErrCode) {
	h.t.Helper()
	for {
		f := h.read()
		if f.Header().StreamID != id {
			if g, ok := f.(*http2.GoAwayFrame); ok {
				h.t.Fatalf("GOAWAY %v while waiting for stream %d", g.ErrCode, id)
			}
			continue
		}
		switch f := f.(type) {
		case *http2.MetaHeadersFrame:
			status = f.PseudoValue("status")
			if f.StreamEnded() {
				return status, http2.ErrCodeNo
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				return status, http2.ErrCodeNo
			}
		case *http2.RSTStreamFrame:
			return status, f.ErrCode
		}
	}
}

// expectHealthy asserts that a new connection gets an answer.
func expectHealthy(t *testing.T, addr string) {
	t.Helper()
	_, body := h2Get(t, h2cClient(), "http://"+addr+"/")
	if !strings.HasPrefix(body, "hello h2=true") {
		t.Fatalf("server unhealthy afterwards: %q", body)
	}
}

// heapGrowth runs f and returns how much the live heap grew.
func heapGrowth(f func()) int64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.GC()
	runtime.ReadMemStats(&b)
	return int64(b.HeapAlloc) - int64(a.HeapAlloc)
}

// blockingHandler counts its starts and waits for its body (which the
// attacker never sends), as a proxied upload would.
type blockingHandler struct{ starts atomic.Int64 }

func (h *blockingHandler) ServeEdge(w *ResponseWriter, r *Request) {
	if string(r.Target()) == "/" {
		h2TestHandler{}.ServeEdge(w, r)
		return
	}
	h.starts.Add(1)
	io.Copy(io.Discard, r.Body())
}

// TestH2RapidReset (CVE-2023-44487): a client that opens streams and
// resets them at once gets GOAWAY ENHANCE_YOUR_CALM after MaxResets, the
// handlers started stay within MaxResets plus the concurrency limit, and
// the server answers a new connection.
func TestH2RapidReset(t *testing.T) {
	h := &blockingHandler{}
	const maxResets, streams = 50, 10
	_, addr := startH2C(t, h, Options{HTTP2: HTTP2Limits{MaxResets: maxResets, MaxConcurrentStreams: streams}})
	c := dialH2(t, addr)
	blk := c.block("POST", "/upload")
	done := make(chan http2.ErrCode, 1)
	go func() { done <- c.waitGoAway() }()
	const attempts = 10000
	id := uint32(1)
	for i := 0; i < attempts; i++ {
		// HEADERS and RST_STREAM in one write, as the attack does.
		if c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: blk, EndHeaders: true}) != nil ||
			c.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
			break // the server hung up
		}
		id += 2
	}
	select {
	case code := <-done:
		if code != http2.ErrCodeEnhanceYourCalm {
			t.Fatalf("GOAWAY code %v, want ENHANCE_YOUR_CALM", code)
		}
	case <-time.After(testTimeout):
		t.Fatal("no GOAWAY after rapid resets")
	}
	if n := h.starts.Load(); n > maxResets+streams+1 {
		t.Errorf("%d handlers started for reset streams, want at most %d", n, maxResets+streams+1)
	}
	expectHealthy(t, addr)
}

// TestH2ContinuationFlood (CVE-2024-27316): a header block that never
// ends is cut off at MaxHeaderListSize (plus slack) with GOAWAY, before
// anything decodes it; the heap does not grow with what the client sends.
func TestH2ContinuationFlood(t *testing.T) {
	_, addr := startH2C(t, h2Handler(), Options{HTTP2: HTTP2Limits{MaxHeaderListSize: 16 << 10}})
	var code http2.ErrCode
	var sent int
	grew := heapGrowth(func() {
		c := dialH2(t, addr)
		done := make(chan http2.ErrCode, 1)
		go func() { done <- c.waitGoAway() }()
		frag := bytes.Repeat([]byte{0x40, 0x01, 'a', 0x01, 'b'}, 3000) // literal fields
		c.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: frag[:1000], EndHeaders: false})
		for sent = 0; sent < 64<<20; sent += len(frag) {
			if c.fr.WriteContinuation(1, false, frag) != nil {
				break
			}
		}
		select {
		case code = <-done:
		case <-time.After(testTimeout):
			t.Fatal("no GOAWAY during a CONTINUATION flood")
		}
	})
	if code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", code)
	}
	if sent >= 64<<20 {
		t.Errorf("the server read %d bytes of one header block", sent)
	}
	if grew > 8<<20 {
		t.Errorf("heap grew %d bytes", grew)
	}
	expectHealthy(t, addr)
}

// TestH2HPACKBomb: a small block that names one big dynamic-table entry
// thousands of times decodes to far more than MaxHeaderListSize; the
// stream is answered 431 and the connection goes on.
func TestH2HPACKBomb(t *testing.T) {
	_, addr := startH2C(t, h2Handler(), Options{})
	c := dialH2(t, addr)
	var blk []byte
	grew := heapGrowth(func() {
		big := strings.Repeat("v", 3000)
		c.buf.Reset()
		c.enc.WriteField(hpack.HeaderField{Name: ":method", Value: "GET"})
		c.enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: "http"})
		c.enc.WriteField(hpack.HeaderField{Name: ":path", Value: "/"})
		c.enc.WriteField(hpack.HeaderField{Name: "x-bomb", Value: big}) // indexed: dynamic entry 62
		blk = append([]byte(nil), c.buf.Bytes()...)
		for len(blk) < 15000 {
			blk = append(blk, 0x80|62) // indexed field 62, one byte: 3 KB decoded
		}
		c.headers(1, true, blk)
		status, _ := c.waitStream(1)
		if status != "431" {
			t.Errorf("bomb answered %q, want 431", status)
		}
	})
	if grew > 8<<20 {
		t.Errorf("heap grew %d bytes decoding a %d-byte block", grew, len(blk))
	}
	// The same connection serves the next request: HPACK state is intact.
	c.headers(3, true, c.block("GET", "/"))
	if status, _ := c.waitStream(3); status != "200" {
		t.Fatalf("next stream: %q", status)
	}
	expectHealthy(t, addr)
}

// TestH2ControlFlood: PING and SETTINGS frames sent by the hundred
// thousand by a client that reads nothing queue nothing unbounded: the
// server's answers wait in the socket (it stops reading meanwhile) and
// the Write timeout ends the connection.
func TestH2ControlFlood(t *testing.T) {
	_, addr := startH2C(t, h2Handler(), Options{Timeouts: Timeouts{Write: 500 * time.Millisecond}})
	grew := heapGrowth(func() {
		c := dialH2(t, addr)
		c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		var data [8]byte
		var err error
		for i := 0; i < 200000 && err == nil; i++ {
			if i%2 == 0 {
				err = c.fr.WritePing(false, data)
			} else {
				err = c.fr.WriteSettings(http2.Setting{ID: http2.SettingMaxFrameSize, Val: 1 << 14})
			}
		}
		var ne net.Error
		if err != nil && !errors.As(err, &ne) && !errors.Is(err, io.ErrClosedPipe) && !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "broken pipe") {
			t.Logf("flood write: %v", err)
		}
		c.c.Close()
	})
	if grew > 16<<20 {
		t.Errorf("heap grew %d bytes during a control-frame flood", grew)
	}
	expectHealthy(t, addr)
}

// TestH2ZeroWindowStall: a client that opens no window for a response is
// dropped after the Write timeout, and the handler's goroutine ends (the
// goroutine check at cleanup).
func TestH2ZeroWindowStall(t *testing.T) {
	_, addr := startH2C(t, h2Handler(), Options{Timeouts: Timeouts{Write: 300 * time.Millisecond}})
	c := dialH2(t, addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	c.headers(1, true, c.block("GET", "/big"))
	start := time.Now()
	for {
		f, err := c.fr.ReadFrame()
		if err != nil {
			break
		}
		if r, ok := f.(*http2.RSTStreamFrame); ok && r.StreamID == 1 {
			break
		}
		if _, ok := f.(*http2.GoAwayFrame); ok {
			break
		}
	}
	if d := time.Since(start); d > testTimeout/2 {
		t.Fatalf("stalled stream held %v", d)
	}
	expectHealthy(t, addr)
}

// TestH2StreamNeverFinishes: a request whose body never comes is answered
// 408 after the Idle timeout, and its stream ends.
func TestH2StreamNeverFinishes(t *testing.T) {
	_, addr := startH2C(t, h2Handler(), Options{Timeouts: Timeouts{Idle: 300 * time.Millisecond}})
	c := dialH2(t, addr)
	c.headers(1, false, c.block("POST", "/echo"))
	if status, _ := c.waitStream(1); status != "408" {
		t.Fatalf("stalled body answered %q, want 408", status)
	}
	expectHealthy(t, addr)
}

// TestH2StreamIDMisuse: RFC 9113 §5.1 and §5.1.1 errors get the codes the
// RFC names.
func TestH2StreamIDMisuse(t *testing.T) {
	_, addr := startH2C(t, h2Handler(), Options{})
	for _, tc := range []struct {
		name string
		do   func(c *h2raw)
		want http2.ErrCode
	}{
		{"even id", func(c *h2raw) { c.headers(2, true, c.block("GET", "/")) }, http2.ErrCodeProtocol},
		{"decreasing id", func(c *h2raw) {
			c.headers(5, true, c.block("GET", "/"))
			c.headers(3, true, c.block("GET", "/"))
		}, http2.ErrCodeProtocol},
		{"data on idle stream", func(c *h2raw) { c.fr.WriteData(7, true, []byte("x")) }, http2.ErrCodeProtocol},
		{"window update on idle stream", func(c *h2raw) { c.fr.WriteWindowUpdate(9, 1) }, http2.ErrCodeProtocol},
		{"reset of idle stream", func(c *h2raw) { c.fr.WriteRSTStream(11, http2.ErrCodeCancel) }, http2.ErrCodeProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := dialH2(t, addr)
			tc.do(c)
			if code := c.waitGoAway(); code != tc.want {
				t.Errorf("GOAWAY %v, want %v", code, tc.want)
			}
		})
	}
	t.Run("data on closed stream", func(t *testing.T) {
		c := dialH2(t, addr)
		c.headers(1, true, c.block("GET", "/"))
		c.waitStream(1)
		c.fr.WriteData(1, true, []byte("x"))
		if _, code := c.waitStream(1); code != http2.ErrCodeStreamClosed {
			t.Errorf("RST_STREAM %v, want STREAM_CLOSED", code)
		}
	})
	expectHealthy(t, addr)
}

// TestH2FieldValueControls: a field value with a control byte is
// malformed (RST_STREAM PROTOCOL_ERROR): HTTP/1.1 would reject it, and the
// proxy forwards fields to HTTP/1.1.
func TestH2FieldValueControls(t *testing.T) {
	_, addr := startH2C(t, h2Handler(), Options{})
	c := dialH2(t, addr)
	for i, v := range []string{"a\x01b", "a\x7fb", "a\x00b"} {
		id := uint32(2*i + 1)
		c.headers(id, true, c.block("GET", "/", "x-bad", v))
		if _, code := c.waitStream(id); code != http2.ErrCodeProtocol {
			t.Errorf("value %q: %v, want PROTOCOL_ERROR", v, code)
		}
	}
	c.headers(7, true, c.block("GET", "/", "x-ok", "a\tb"))
	if status, _ := c.waitStream(7); status != "200" {
		t.Errorf("value with HTAB: %q", status)
	}
}
