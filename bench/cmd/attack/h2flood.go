package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/simdedge/simdedge/bench/internal/procstat"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const (
	// floodBatch is how many frames one write carries.
	floodBatch = 4096
	// floodHandshake bounds the wait for the server's SETTINGS.
	floodHandshake = 5 * time.Second
	// floodStalled: a last write that completed this long before the
	// bound means the server stopped reading without closing.
	floodStalled = time.Second
	// floodReadSlack is how long the reader waits past the bound for the
	// server's last frames.
	floodReadSlack = 500 * time.Millisecond

	kindContinuation = "CONTINUATION"
	kindData         = "DATA"
	kindWindowUpdate = "WINDOW_UPDATE"
)

// floodKinds are the frames of issue 27's zero-length floods.
var floodKinds = []string{kindContinuation, kindData, kindWindowUpdate}

// floodRoutes: /echo, which the DATA flood's stream asks for.
var floodRoutes = fmt.Sprintf("  - match: {path_prefix: %s}\n    echo: {}\n", echoPath)

// floodFrames returns the frames that open the flood (sent once) and one
// batch of the flood's frame, and the size of that frame.
func floodFrames(kind string) (opening, batch []byte, frameLen int) {
	var open, b bytes.Buffer
	ofr, bfr := http2.NewFramer(&open, nil), http2.NewFramer(&b, nil)
	block := encodeFields([]hpack.HeaderField{
		{Name: ":method", Value: "POST"}, {Name: ":scheme", Value: "http"},
		{Name: ":authority", Value: host}, {Name: ":path", Value: echoPath},
	})
	for i := range floodBatch {
		switch kind {
		case kindContinuation:
			if i == 0 {
				ofr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block})
			}
			bfr.WriteContinuation(1, false, nil)
		case kindData:
			if i == 0 {
				ofr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block, EndHeaders: true})
			}
			bfr.WriteData(1, false, nil)
		case kindWindowUpdate:
			bfr.WriteWindowUpdate(0, 1)
		}
	}
	return open.Bytes(), b.Bytes(), b.Len() / floodBatch
}

// runH2Flood: one h2c connection writes one kind of empty frame as fast as
// it can, until the server closes it or the bound passes.
func runH2Flood(ctx context.Context, o *options, v variant) row {
	r := row{scenario: "h2flood", v: v}
	bound := paramsFor(o).h2floodBound
	addrs, err := freeAddrs(1)
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	s, err := launch(ctx, o, customYAML(o, v, []listenerSpec{{addr: addrs[0]}}, "", floodRoutes), addrs[0])
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	defer s.stop()
	f, err := floodConn(ctx, s.addr, v.kind, bound, s.pid())
	if err != nil {
		r.result = "error: " + err.Error()
		return r
	}
	r.result, r.notes = f.report(bound)
	return r
}

// floodResult is what one flood saw.
type floodResult struct {
	// closedAt is when the connection ended (EOF, reset, write error),
	// zero if it stayed open; framesAtClose the frames written by then.
	closedAt      time.Duration
	framesAtClose int64
	goaway        bool
	goawayCode    http2.ErrCode
	goawayAt      time.Duration
	// rst is the code of a reset of stream 1, "" if none.
	rst string
	// frames were written in all, over wrote; the last write completed
	// at lastWrite.
	frames           int64
	wrote, lastWrite time.Duration
	// cpu is the server's CPU time over the flood.
	cpu time.Duration
}

// floodConn opens an h2c connection to addr and writes kind's frames on
// it as fast as it can, until the server closes it or bound passes. pid is
// the server's, whose CPU time it reads before and after.
func floodConn(ctx context.Context, addr, kind string, bound time.Duration, pid int) (floodResult, error) {
	var res floodResult
	c, fr, err := h2dial(addr, false, time.Now().Add(floodHandshake))
	if err != nil {
		return res, err
	}
	defer c.Close()
	if err := awaitSettings(fr); err != nil {
		return res, err
	}
	opening, batch, frameLen := floodFrames(kind)
	if _, err := c.Write(opening); err != nil {
		return res, err
	}

	cpu0, _ := procstat.CPUTime(pid)
	start := time.Now()
	end := start.Add(bound)
	// The reader waits a little past the bound for the server's last
	// frames.
	c.SetWriteDeadline(end)
	c.SetReadDeadline(end.Add(floodReadSlack))
	var written atomic.Int64
	var mu sync.Mutex
	// closed: the reader saw the end of the connection.
	closed := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		readFlood(fr, &mu, &res, start, end, func() int64 { return written.Load() / int64(frameLen) }, closed)
	})
	defer context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })()

	var writeErr error
	var lastWrite time.Duration
flood:
	for time.Now().Before(end) {
		select {
		case <-closed:
			break flood
		default:
		}
		n, err := c.Write(batch)
		written.Add(int64(n))
		if err != nil {
			writeErr = err
			break
		}
		lastWrite = time.Since(start)
	}
	wrote := time.Since(start)
	cpu1, _ := procstat.CPUTime(pid)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	res.frames, res.wrote, res.lastWrite, res.cpu = written.Load()/int64(frameLen), wrote, lastWrite, cpu1-cpu0
	if res.closedAt == 0 && writeErr != nil && !errors.Is(writeErr, os.ErrDeadlineExceeded) {
		res.closedAt, res.framesAtClose = wrote, res.frames
	}
	return res, nil
}

// report is a flood row's result and notes.
func (f floodResult) report(bound time.Duration) (result, notes string) {
	var ns []string
	if f.closedAt != 0 {
		result = fmt.Sprintf("closed after %s, %s frames sent", fmtMillis(f.closedAt), fmtCount(f.framesAtClose))
	} else {
		result = fmt.Sprintf("still open at %s, %s frames sent", fmtSeconds(bound), fmtCount(f.frames))
		if bound-f.lastWrite > floodStalled {
			ns = append(ns, fmt.Sprintf("the server stopped reading at %s", fmtSeconds(f.lastWrite)))
		}
	}
	if f.goaway {
		result += ", GOAWAY " + f.goawayCode.String()
		ns = append(ns, fmt.Sprintf("GOAWAY at %s", fmtMillis(f.goawayAt)))
	} else {
		result += ", no GOAWAY"
	}
	if f.rst != "" {
		ns = append(ns, "stream 1 reset "+f.rst)
	}
	cpu := fmt.Sprintf("server CPU %.1f s over %s", f.cpu.Seconds(), fmtSeconds(f.wrote))
	if f.wrote > 0 {
		cpu += fmt.Sprintf(" (%.0f %%)", 100*f.cpu.Seconds()/f.wrote.Seconds())
	}
	return result, strings.Join(append([]string{cpu}, ns...), "; ")
}

// awaitSettings reads the server's first frames until its SETTINGS, and
// acknowledges them, as a client must before it can expect anything.
func awaitSettings(fr *http2.Framer) error {
	for range h2MaxFrames {
		f, err := fr.ReadFrame()
		if err != nil {
			return err
		}
		if sf, ok := f.(*http2.SettingsFrame); ok && !sf.IsAck() {
			return fr.WriteSettingsAck()
		}
	}
	return errNoSettings
}

var errNoSettings = errors.New("attack: no SETTINGS from the server")

// readFlood reads the server's frames while the flood runs, noting in
// res (under mu) a GOAWAY, a reset of stream 1, and the end of the
// connection with the frames written by then, until the connection ends
// or its deadline.
func readFlood(fr *http2.Framer, mu *sync.Mutex, res *floodResult, start, end time.Time, frames func() int64, closed chan<- struct{}) {
	defer close(closed)
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			var ce http2.ConnectionError
			if errors.As(err, &ce) || errors.Is(err, os.ErrDeadlineExceeded) || time.Now().After(end) {
				// The client's own deadline, or a frame this reader
				// cannot parse: not the server closing.
				return
			}
			mu.Lock()
			res.closedAt, res.framesAtClose = time.Since(start), frames()
			mu.Unlock()
			return
		}
		mu.Lock()
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			if !res.goaway {
				res.goaway, res.goawayCode, res.goawayAt = true, f.ErrCode, time.Since(start)
			}
		case *http2.RSTStreamFrame:
			if res.rst == "" {
				res.rst = f.ErrCode.String()
			}
		}
		mu.Unlock()
	}
}

// fmtCount prints a count, in millions from 10^6.
func fmtCount(n int64) string {
	if n >= 1_000_000 {
		return fmt.Sprintf("%.1f M", float64(n)/1e6)
	}
	return fmt.Sprint(n)
}
