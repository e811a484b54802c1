package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/http2"
)

// Our frame reader against x/net's Framer, which it replaces on the read
// side: for the same bytes, the same frames with the same fields, and the
// same error in the same place.

// h2Verdict names an error the way the connection acts on it (readFailed).
func h2Verdict(err error) string {
	var se http2.StreamError
	var ce http2.ConnectionError
	switch {
	case err == nil:
		return "ok"
	case errors.As(err, &se):
		return fmt.Sprintf("stream error %d %v", se.StreamID, se.Code)
	case errors.As(err, &ce):
		return "connection error " + http2.ErrCode(ce).String()
	case errors.Is(err, http2.ErrFrameTooLarge):
		return "frame too large"
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	}
	return "other: " + err.Error()
}

// h2FramesOurs reads frames from data until an error other than a stream
// error, describing each.
func h2FramesOurs(data []byte, chunk int, max uint32) []string {
	in := &h2in{src: &fuzzStream{in: data, step: chunk}} // fuzz_test.go: reads of at most chunk bytes
	in.take()
	r := h2reader{in: in, max: max}
	var out []string
	var f h2frame
	for range 1000 {
		err := r.next(&f)
		if err != nil {
			out = append(out, h2Verdict(err))
			if !strings.HasPrefix(out[len(out)-1], "stream") {
				return out
			}
			continue
		}
		d := fmt.Sprintf("%v flags %#x stream %d length %d", f.typ, uint8(f.flags), f.sid, f.length)
		switch f.typ {
		case http2.FrameData:
			d += fmt.Sprintf(" data %q", f.p)
		case http2.FrameHeaders:
			d += fmt.Sprintf(" fragment %q", f.p)
			if f.has(http2.FlagHeadersPriority) {
				d += fmt.Sprintf(" dep %d", f.dep)
			}
		case http2.FrameContinuation:
			d += fmt.Sprintf(" fragment %q", f.p)
		case http2.FramePriority:
			d += fmt.Sprintf(" dep %d", f.dep)
		case http2.FrameRSTStream, http2.FrameGoAway:
			d += fmt.Sprintf(" code %d", f.val)
		case http2.FrameWindowUpdate:
			d += fmt.Sprintf(" increment %d", f.val)
		case http2.FramePing:
			d += fmt.Sprintf(" ping %q", f.p)
		case http2.FrameSettings:
			for i := range len(f.p) / 6 {
				d += fmt.Sprintf(" %v", f.setting(i))
			}
		}
		out = append(out, d)
	}
	return out
}

// h2FramesXNet is h2FramesOurs with x/net's Framer.
func h2FramesXNet(data []byte, max uint32) []string {
	fr := http2.NewFramer(nil, bytes.NewReader(data))
	fr.SetMaxReadFrameSize(max)
	var out []string
	for range 1000 {
		f, err := fr.ReadFrame()
		if err != nil {
			out = append(out, h2Verdict(err))
			if !strings.HasPrefix(out[len(out)-1], "stream") {
				return out
			}
			continue
		}
		h := f.Header()
		d := fmt.Sprintf("%v flags %#x stream %d length %d", h.Type, uint8(h.Flags), h.StreamID, h.Length)
		switch f := f.(type) {
		case *http2.DataFrame:
			d += fmt.Sprintf(" data %q", f.Data())
		case *http2.HeadersFrame:
			d += fmt.Sprintf(" fragment %q", f.HeaderBlockFragment())
			if f.HasPriority() {
				d += fmt.Sprintf(" dep %d", f.Priority.StreamDep)
			}
		case *http2.ContinuationFrame:
			d += fmt.Sprintf(" fragment %q", f.HeaderBlockFragment())
		case *http2.PriorityFrame:
			d += fmt.Sprintf(" dep %d", f.StreamDep)
		case *http2.RSTStreamFrame:
			d += fmt.Sprintf(" code %d", f.ErrCode)
		case *http2.GoAwayFrame:
			d += fmt.Sprintf(" code %d", f.ErrCode)
		case *http2.WindowUpdateFrame:
			d += fmt.Sprintf(" increment %d", f.Increment)
		case *http2.PingFrame:
			d += fmt.Sprintf(" ping %q", f.Data[:])
		case *http2.SettingsFrame:
			for i := range f.NumSettings() {
				d += fmt.Sprintf(" %v", f.Setting(i))
			}
		}
		out = append(out, d)
	}
	return out
}

// h2FrameBytes is one frame on the wire, written as is (Framer's raw
// write checks nothing).
func h2FrameBytes(typ http2.FrameType, flags http2.Flags, sid uint32, payload []byte) []byte {
	var b bytes.Buffer
	http2.NewFramer(&b, nil).WriteRawFrame(typ, flags, sid, payload)
	return b.Bytes()
}

// h2FrameCorpus is a frame of every type with every flag, on stream 0, 1
// and 2, with payloads of the lengths that matter to the checks (empty,
// one byte, a pad length over the rest, a priority, 4, 5, 6, 8 and 12
// bytes, a window increment of 0), after a SETTINGS frame.
func h2FrameCorpus() [][]byte {
	payloads := [][]byte{
		{}, {0}, {3, 'a', 'b'}, {1, 'a', 0}, {0, 0, 0, 1}, {0, 0, 0, 0},
		{0x80, 0, 0, 1, 16}, {0, 0, 0, 3, 16, 'x'}, {2, 0, 0, 0, 5, 16, 'h', 0, 0},
		{0, 4, 0x80, 0, 0, 0}, {0, 4, 0, 0, 0xff, 0xff, 0, 5, 0, 0, 0x40, 0},
		[]byte("12345678"), {0, 0, 0, 0, 0, 0, 0, 2, 'd'},
	}
	var out [][]byte
	for typ := range http2.FrameType(0x12) {
		for _, flags := range []http2.Flags{0, 0x1, 0x4, 0x8, 0x20, 0x29, 0x2d, 0xff} {
			for _, sid := range []uint32{0, 1, 2} {
				for _, p := range payloads {
					out = append(out, h2FrameBytes(typ, flags, sid, p))
				}
			}
		}
	}
	return out
}

// TestH2FramesMatchXNet: every frame of h2FrameCorpus, alone and in
// sequences that open and interrupt header blocks, whole and split
// across reads, reads as x/net's Framer reads it; also a frame over the
// size limit and one cut short.
func TestH2FramesMatchXNet(t *testing.T) {
	corpus := h2FrameCorpus()
	settings := h2FrameBytes(http2.FrameSettings, 0, 0, []byte{0, 3, 0, 0, 0, 100})
	check := func(data []byte, max uint32) {
		t.Helper()
		want := h2FramesXNet(data, max)
		for _, chunk := range []int{1 << 20, 1, 7, 10} {
			if got := h2FramesOurs(data, chunk, max); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("reads of %d bytes of %q:\nours  %q\nx/net %q", chunk, data, got, want)
			}
		}
	}
	for i, f := range corpus {
		check(append(append([]byte(nil), settings...), f...), 16384)
		// After the frame, the one 97 frames later: a header block
		// left open is interrupted or continued.
		check(append(append([]byte(nil), f...), corpus[(i+97)%len(corpus)]...), 16384)
	}
	check(h2FrameBytes(http2.FrameData, 0, 1, make([]byte, 100)), 99)
	check(h2FrameBytes(http2.FrameData, 0, 1, make([]byte, 100))[:50], 16384)
	check([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 16384)
}

// FuzzH2Frames: any bytes read as frames by our reader and by x/net's
// Framer give the same frames and the same error at the same frame.
func FuzzH2Frames(f *testing.F) {
	for i, c := range h2FrameCorpus() {
		if i%7 == 0 {
			f.Add(c, uint8(0), uint16(0))
		}
	}
	f.Add(h2FrameBytes(http2.FrameHeaders, 0, 1, []byte{0x82}), uint8(3), uint16(1))
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8, max uint16) {
		n := int(chunk)
		if n == 0 {
			n = 1 << 20
		}
		limit := uint32(16384)
		if max != 0 {
			limit = uint32(max)
		}
		want := h2FramesXNet(data, limit)
		if got := h2FramesOurs(data, n, limit); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("reads of %d bytes:\nours  %q\nx/net %q", n, got, want)
		}
	})
}
