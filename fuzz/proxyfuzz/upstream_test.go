package proxyfuzz

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/simdedge/simdedge/parse/http"
)

// upstream is a loopback HTTP/1.1 origin that parses every request it
// receives with parse/http's strict defaults, answers each with a fixed
// response, and records how many request heads it accepted and anything
// that failed strict parsing.
type upstream struct {
	ln    net.Listener
	heads atomic.Int64
	mu    sync.Mutex
	bad   []string // descriptions of violations, never raw input
	wg    sync.WaitGroup
	conns map[net.Conn]struct{} // open proxy connections, closed on cleanup
}

const upstreamReply = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

// upstreamBuf bounds what one upstream connection buffers; the proxy never
// forwards a head larger than the front limits.
const upstreamBuf = 256 << 10

func startUpstream(tb testing.TB) *upstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	u := &upstream{ln: ln, conns: map[net.Conn]struct{}{}}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u.mu.Lock()
			u.conns[c] = struct{}{}
			u.mu.Unlock()
			u.wg.Add(1)
			go func() {
				defer u.wg.Done()
				u.serve(c)
				u.mu.Lock()
				delete(u.conns, c)
				u.mu.Unlock()
			}()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		u.mu.Lock()
		for c := range u.conns {
			c.Close()
		}
		u.mu.Unlock()
		u.wg.Wait()
	})
	return u
}

func (u *upstream) violation(what string) {
	u.mu.Lock()
	u.bad = append(u.bad, what)
	u.mu.Unlock()
}

// take returns and clears the recorded head count and violations.
func (u *upstream) take() (int64, []string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	bad := u.bad
	u.bad = nil
	return u.heads.Swap(0), bad
}

// serve reads requests from one proxy connection until it closes. Each
// head must parse strictly; bodies are framed as the head says.
func (u *upstream) serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 0, upstreamBuf)
	var req http.Request
	fill := func() bool {
		if len(buf) == cap(buf) {
			u.violation("request larger than the upstream buffer")
			return false
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		return err == nil || n > 0
	}
	for {
		n, err := http.ParseRequest(buf, &req)
		if errors.Is(err, http.ErrNeedMore) {
			if !fill() {
				return
			}
			continue
		}
		if err != nil {
			u.violation("forwarded request failed strict parsing: " + err.Error())
			return
		}
		u.heads.Add(1)
		buf = append(buf[:0], buf[n:]...)
		switch req.Body {
		case http.BodyLength:
			for int64(len(buf)) < req.ContentLength {
				if !fill() {
					return
				}
			}
			buf = append(buf[:0], buf[req.ContentLength:]...)
		case http.BodyChunked:
			var d http.ChunkedDecoder
			for {
				_, consumed, err := d.Decode(buf)
				buf = append(buf[:0], buf[consumed:]...)
				if err == nil {
					break
				}
				if !errors.Is(err, http.ErrNeedMore) {
					u.violation("forwarded chunked body failed strict decoding: " + err.Error())
					return
				}
				if !fill() {
					return
				}
			}
		}
		if _, err := c.Write([]byte(upstreamReply)); err != nil {
			return
		}
	}
}
