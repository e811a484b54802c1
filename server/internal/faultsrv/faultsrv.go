// Package faultsrv is a fault-injection HTTP/1.1 backend for tests: a real
// TCP listener on loopback whose behaviour a test sets and changes while
// it runs. It can answer normally, refuse connections (its port closed),
// accept and never read (a black hole), reset after N bytes of the
// response, stall before the head or in the body, answer a 5xx status for
// a number of requests or a while and then recover, close in the middle of
// the body, or answer after a fixed delay. It counts the connections and
// requests it saw, so tests can assert what reached which target.
//
// Only loopback addresses are used. Close ends every goroutine and
// connection it started.
package faultsrv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Kind is a behaviour.
type Kind int

const (
	// Normal answers 200 with Body (default "ok ADDR\n").
	Normal Kind = iota
	// Refuse closes the listening socket: connections are refused.
	// Switching away re-opens it on the same port.
	Refuse
	// BlackHole accepts connections and never reads or answers.
	BlackHole
	// ResetAfter reads the request, writes Bytes bytes of a normal
	// response and resets the connection (RST).
	ResetAfter
	// StallHead reads the request and never answers.
	StallHead
	// StallBody sends the head (with the full Content-Length) and Bytes
	// bytes of the body, then stalls.
	StallBody
	// Status answers Status (a 5xx) to the next Count requests, or until
	// For has passed since Set, then answers normally again; with neither,
	// always.
	Status
	// CloseMidBody sends the head and Bytes bytes of the body, then
	// closes the connection (FIN).
	CloseMidBody
	// Slow waits Delay, then answers normally.
	Slow
)

// Behavior is what the server does with the next requests.
type Behavior struct {
	Kind  Kind
	Bytes int
	// Status, Count and For configure Status.
	Status int
	Count  int
	For    time.Duration
	Delay  time.Duration
	// Body replaces the normal body.
	Body string
}

// Server is one fault-injecting backend.
type Server struct {
	addr string

	mu     sync.Mutex
	ln     net.Listener
	b      Behavior
	until  time.Time // Status with For
	left   int       // Status with Count
	conns  map[net.Conn]bool
	closed bool

	done chan struct{}
	wg   sync.WaitGroup

	nconns, nreqs, nstatus atomic.Int64
}

// ErrClosed is returned by Set after Close.
var ErrClosed = errors.New("faultsrv: server closed")

// Start starts a server on a free loopback port with behaviour b.
func Start(b Behavior) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{addr: ln.Addr().String(), conns: map[net.Conn]bool{}, done: make(chan struct{})}
	s.mu.Lock()
	s.ln = ln
	s.wg.Add(1)
	go s.accept(ln)
	s.mu.Unlock()
	if err := s.Set(b); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// New starts a server for t and closes it at the end of the test.
func New(t testing.TB, b Behavior) *Server {
	t.Helper()
	s, err := Start(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// Addr is the server's "127.0.0.1:port".
func (s *Server) Addr() string { return s.addr }

// Conns is the number of connections accepted.
func (s *Server) Conns() int64 { return s.nconns.Load() }

// Requests is the number of request heads read.
func (s *Server) Requests() int64 { return s.nreqs.Load() }

// StatusAnswers is the number of requests answered with Behavior.Status.
func (s *Server) StatusAnswers() int64 { return s.nstatus.Load() }

// Set changes the behaviour for the requests that follow, on open
// connections too. Refuse closes the listener and every connection;
// leaving Refuse listens on the same port again.
func (s *Server) Set(b Behavior) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	s.b = b
	s.left, s.until = b.Count, time.Time{}
	if b.Kind == Status && b.For > 0 {
		s.until = time.Now().Add(b.For)
	}
	switch {
	case b.Kind == Refuse && s.ln != nil:
		s.ln.Close()
		s.ln = nil
		for c := range s.conns {
			c.Close()
		}
	case b.Kind != Refuse && s.ln == nil:
		ln, err := net.Listen("tcp", s.addr)
		if err != nil {
			return fmt.Errorf("faultsrv: listen again: %w", err)
		}
		s.ln = ln
		s.wg.Add(1)
		go s.accept(ln)
	}
	return nil
}

// Close stops the server: the listener, every connection and goroutine.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
		s.ln = nil
	}
	for c := range s.conns {
		c.Close()
	}
	close(s.done)
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed || s.ln != ln {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		s.nconns.Add(1)
		go s.serve(c)
	}
}

// next returns the behaviour for one request, consuming a Status count.
func (s *Server) next() Behavior {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.b
	if b.Kind == Status {
		switch {
		case b.For > 0:
			if !time.Now().Before(s.until) {
				b.Kind = Normal
			}
		case b.Count > 0:
			if s.left == 0 {
				b.Kind = Normal
			} else {
				s.left--
			}
		}
	}
	return b
}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	if s.current().Kind == BlackHole {
		s.stall()
		return
	}
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		s.nreqs.Add(1)
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		if !s.answer(c, s.next()) || req.Close {
			return
		}
	}
}

func (s *Server) current() Behavior {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b
}

// stall waits until the server closes (the connection is closed by Close).
func (s *Server) stall() { <-s.done }

// answer writes one response as b says; false ends the connection.
func (s *Server) answer(c net.Conn, b Behavior) bool {
	body := b.Body
	if body == "" {
		body = "ok " + s.addr + "\n"
	}
	status := http.StatusOK
	if b.Kind == Status {
		status = b.Status
		s.nstatus.Add(1)
	}
	resp := "HTTP/1.1 " + strconv.Itoa(status) + " " + http.StatusText(status) + "\r\n" +
		"Content-Type: text/plain\r\nX-Target: " + s.addr + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	head := len(resp)
	resp += body
	switch b.Kind {
	case BlackHole, StallHead:
		s.stall()
		return false
	case Slow:
		select {
		case <-time.After(b.Delay):
		case <-s.done:
			return false
		}
	case ResetAfter:
		c.Write([]byte(resp[:min(b.Bytes, len(resp))]))
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0) // close sends RST
		}
		return false
	case StallBody, CloseMidBody:
		c.Write([]byte(resp[:min(head+b.Bytes, len(resp)-1)]))
		if b.Kind == StallBody {
			s.stall()
		}
		return false
	}
	_, err := c.Write([]byte(resp))
	return err == nil
}

// RefusedAddr returns a loopback address where nothing listens (a port
// just closed), for a target that refuses from the start.
func RefusedAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	a := ln.Addr().String()
	ln.Close()
	return a, nil
}
