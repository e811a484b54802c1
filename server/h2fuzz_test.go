package server

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// h2Seeds are frame sequences that follow the preface: well-formed
// requests and the kinds of misuse the protections handle.
func h2Seeds() [][]byte {
	var seeds [][]byte
	blockOf := func(fields ...string) []byte {
		var b bytes.Buffer
		e := hpack.NewEncoder(&b)
		for i := 0; i+1 < len(fields); i += 2 {
			e.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
		}
		return b.Bytes()
	}
	get := blockOf(":method", "GET", ":scheme", "http", ":path", "/", ":authority", "x")
	post := blockOf(":method", "POST", ":scheme", "http", ":path", "/echo", ":authority", "x", "content-length", "3")
	for _, write := range []func(fr *http2.Framer){
		func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: get, EndStream: true, EndHeaders: true})
		},
		func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: post, EndHeaders: true})
			fr.WriteData(1, false, []byte("ab"))
			fr.WriteData(1, true, []byte("c"))
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: get[:3], EndStream: true})
			fr.WriteContinuation(3, true, get[3:])
		},
		func(fr *http2.Framer) {
			fr.WritePing(false, [8]byte{1})
			fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: get, EndStream: true, EndHeaders: true})
			fr.WriteWindowUpdate(1, 10)
			fr.WriteWindowUpdate(0, 100)
			fr.WriteRSTStream(1, http2.ErrCodeCancel)
			fr.WritePriority(5, http2.PriorityParam{StreamDep: 5})
			fr.WriteGoAway(0, http2.ErrCodeNo, nil)
		},
		func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 2, BlockFragment: get, EndStream: true, EndHeaders: true})
		},
		func(fr *http2.Framer) {
			fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: []byte{0xbf, 0xff, 0xff}, EndStream: true, EndHeaders: true})
		},
	} {
		var b bytes.Buffer
		fr := http2.NewFramer(&b, nil)
		fr.AllowIllegalWrites = true
		fr.WriteSettings()
		write(fr)
		seeds = append(seeds, b.Bytes())
	}
	return seeds
}

// FuzzH2Conn feeds frame sequences to an HTTP/2 connection after the
// preface: the connection must end (the input is finite), never panic,
// and write only frames that a Framer reads back.
func FuzzH2Conn(f *testing.F) {
	for _, s := range h2Seeds() {
		f.Add(s, uint8(255))
		f.Add(s, uint8(3))
	}
	s := New(Options{Handler: h2Handler(), Limits: Limits{MaxBodyBytes: 1 << 10},
		HTTP2: HTTP2Limits{MaxConcurrentStreams: 4, MaxHeaderListSize: 1 << 10, MaxResets: 4}})
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		st := &fuzzStream{in: append([]byte(h2Preface), in...), step: int(step) + 1}
		c := newConn(s, st)
		c.h2c = true
		c.serve(true)
		c.release()
		fr := http2.NewFramer(nil, &st.out)
		fr.SetMaxReadFrameSize(1 << 24)
		for {
			_, err := fr.ReadFrame()
			if err == io.EOF {
				break
			}
			var se http2.StreamError
			if err != nil && !errors.As(err, &se) {
				t.Fatalf("server wrote an unreadable frame: %v\ninput %q", err, in)
			}
		}
	})
}
