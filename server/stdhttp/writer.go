package stdhttp

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/simdedge/simdedge/server"
)

// responseWriter is the http.ResponseWriter (and http.Flusher) handed to a
// standard handler.
type responseWriter struct {
	w        *server.ResponseWriter
	h        http.Header
	started  bool
	hijacked bool
}

var _ http.Flusher = (*responseWriter)(nil)

func (s *responseWriter) Header() http.Header { return s.h }

func (s *responseWriter) WriteHeader(code int) {
	if s.started || s.hijacked {
		return
	}
	if code >= 100 && code < 200 {
		return // informational responses are not forwarded
	}
	s.started = true
	for k, vs := range s.h {
		if k == "Content-Length" {
			if len(vs) > 0 {
				if n, err := strconv.ParseInt(vs[0], 10, 64); err == nil {
					s.w.SetContentLength(n)
				}
			}
			continue
		}
		for _, v := range vs {
			s.w.AddHeader(k, v)
		}
	}
	if _, ok := s.h["Content-Type"]; !ok {
		// net/http sniffs; a fixed default keeps responses allocation-
		// and buffering-free. Handlers that care set it.
		s.w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	}
	s.w.WriteHeader(code)
}

func (s *responseWriter) Write(p []byte) (int, error) {
	if s.hijacked {
		return 0, http.ErrHijacked
	}
	if !s.started {
		s.WriteHeader(http.StatusOK)
	}
	return s.w.Write(p)
}

// Flush sends the head and the body written so far.
func (s *responseWriter) Flush() {
	if s.hijacked {
		return
	}
	if !s.started {
		s.WriteHeader(http.StatusOK)
	}
	s.w.Flush()
}

func (s *responseWriter) commit() {
	if !s.started {
		s.WriteHeader(http.StatusOK)
	}
}

// hijackWriter adds http.Hijacker, for HTTP/1.1 (an HTTP/2 stream cannot
// be hijacked, and net/http's HTTP/2 writer is no Hijacker either).
type hijackWriter struct {
	*responseWriter
	sw *server.ResponseWriter
}

var _ http.Hijacker = hijackWriter{}

// Hijack implements http.Hijacker. The bufio.Reader holds the bytes the
// server had already read past the request; the connection's Close is the
// caller's to call. Unlike net/http, a response already started (written
// or flushed) cannot be hijacked: it fails with server.ErrNoHijack, as it
// does over HTTP/2 and message transports.
func (h hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if h.started {
		return nil, nil, server.ErrNoHijack
	}
	st, buffered, err := h.sw.Hijack()
	if err != nil {
		return nil, nil, err
	}
	h.hijacked = true
	c, ok := st.(net.Conn)
	if !ok {
		c = streamConn{st}
	}
	var src io.Reader = c
	if len(buffered) > 0 {
		src = io.MultiReader(bytes.NewReader(buffered), c)
	}
	rd := bufio.NewReader(src)
	return c, bufio.NewReadWriter(rd, bufio.NewWriter(c)), nil
}

// streamConn is a server.Stream seen as a net.Conn (every Stream but the
// SetDeadline of net.Conn).
type streamConn struct{ server.Stream }

func (c streamConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.SetWriteDeadline(t)
}
