package server

import (
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestStreamHeadFieldValues: a response field's value goes out over
// HTTP/2 without the whitespace around it (RFC 9113 §8.2.1: a value must
// not start or end with it, and clients reset such a response as
// malformed), as over HTTP/3, and connection-specific fields are left out.
// HTTP/2 used to trim only the leading whitespace; the two protocols now
// encode heads through one function (encodeHead, encodeLines).
func TestStreamHeadFieldValues(t *testing.T) {
	h := HandlerFunc(func(w *ResponseWriter, r *Request) {
		w.AddHeader("X-Pad", " \tv \t")
		w.AddHeader("Keep-Alive", "timeout=5")
		w.WriteString("ok")
	})
	check := func(t *testing.T, fields map[string]string) {
		t.Helper()
		if v, ok := fields["x-pad"]; !ok || v != "v" {
			t.Errorf("x-pad %q (sent: %v), want %q", v, ok, "v")
		}
		if _, ok := fields["keep-alive"]; ok {
			t.Error("keep-alive sent")
		}
	}
	t.Run("h2", func(t *testing.T) {
		_, addr := startH2C(t, h, Options{})
		c := dialH2(t, addr)
		c.headers(1, true, c.block("GET", "/"))
		for {
			if f, ok := c.read().(*http2.MetaHeadersFrame); ok && f.StreamID == 1 {
				fields := map[string]string{}
				for _, hf := range f.RegularFields() {
					fields[hf.Name] = hf.Value
				}
				check(t, fields)
				return
			}
		}
	})
	t.Run("h3", func(t *testing.T) {
		_, p, addr := startH3(t, h, Options{}, HTTP3Options{})
		c, _ := h3Client(t, p)
		resp, _ := h3Do(t, c, "GET", "https://"+addr+"/", nil)
		fields := map[string]string{}
		for name, vs := range resp.Header {
			if name == "X-Pad" {
				fields["x-pad"] = vs[0]
			}
			if name == "Keep-Alive" {
				fields["keep-alive"] = vs[0]
			}
		}
		check(t, fields)
	})
}

// TestStreamEndTime: a stream's end time, derived from when its head was
// read, is the time now in both clocks, so its duration is not 0.
func TestStreamEndTime(t *testing.T) {
	for _, ago := range []time.Duration{-1, 0, 200 * time.Millisecond, 2 * streamRecent} {
		var m streamReq
		if ago >= 0 {
			m.at = time.Now().Add(-ago)
		}
		end, now := m.endTime(), time.Now()
		if d := now.Sub(end); d < 0 || d > 50*time.Millisecond {
			t.Errorf("read %v ago: end time %v from now", ago, d)
		}
		if diff := now.Round(0).Sub(end.Round(0)); diff < -50*time.Millisecond || diff > 50*time.Millisecond {
			t.Errorf("read %v ago: wall time %v from now's", ago, diff)
		}
		if ago > 0 && end.Sub(m.at) < ago {
			t.Errorf("read %v ago: duration %v", ago, end.Sub(m.at))
		}
	}
}
