package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// recorderLineMax bounds one line of a request head the recorder
	// reads, and recorderLinesMax their number: a head past either ends
	// the connection.
	recorderLineMax  = 16 << 10
	recorderLinesMax = 200
	// recorderBodyMax bounds the body it reads and discards.
	recorderBodyMax = 1 << 20
	// caseHeader carries a scenario's case number to the recorder, so that
	// a request is matched to the case that sent it.
	caseHeader = "X-Attack-Case"
)

var errRecorderHead = errors.New("attack: recorder: bad request head")

// recorded is one request as the backend received it, bytes as sent.
type recorded struct {
	// line is the request line without CRLF.
	line string
	// hosts are the values of every Host field.
	hosts []string
	// caseID is the caseHeader value ("" if none).
	caseID string
}

// recorder is an in-process HTTP/1.1 backend that keeps every request
// head it reads, without parsing the request line, and answers 200 "ok":
// what a proxy sends is what it records, however malformed (a net/http
// backend would refuse a malformed line before any handler saw it).
type recorder struct {
	l     net.Listener
	addr  string
	mu    sync.Mutex
	reqs  []recorded
	conns map[net.Conn]struct{}
	// closed: close has run; a connection accepted just before is closed
	// at once rather than served.
	closed bool
	wg     sync.WaitGroup
}

func startRecorder() (*recorder, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return nil, err
	}
	r := &recorder{l: l, addr: l.Addr().String(), conns: map[net.Conn]struct{}{}}
	r.wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r.mu.Lock()
			if r.closed {
				r.mu.Unlock()
				c.Close()
				return
			}
			r.conns[c] = struct{}{}
			r.mu.Unlock()
			r.wg.Go(func() {
				r.serve(c)
				r.mu.Lock()
				delete(r.conns, c)
				r.mu.Unlock()
				c.Close()
			})
		}
	})
	return r, nil
}

// serve reads requests on c until it closes, an error, or a request head
// that takes longer than backendReadHeader.
func (r *recorder) serve(c net.Conn) {
	br := bufio.NewReaderSize(c, recorderLineMax)
	for {
		c.SetReadDeadline(time.Now().Add(backendReadHeader))
		req, body, err := readHead(br)
		if err != nil {
			return
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, req)
		r.mu.Unlock()
		if err := body(); err != nil {
			return
		}
		c.SetWriteDeadline(time.Now().Add(backendReadHeader))
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nok\n"); err != nil {
			return
		}
	}
}

// readHead reads one request head from br and returns it with a function
// that reads (and discards) its body, by Content-Length or chunked.
func readHead(br *bufio.Reader) (recorded, func() error, error) {
	var req recorded
	var length int64
	chunked := false
	for i := 0; ; i++ {
		if i == recorderLinesMax {
			return req, nil, errRecorderHead
		}
		line, err := br.ReadSlice('\n')
		if err != nil {
			return req, nil, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if i == 0 {
			req.line = string(line)
			continue
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return req, nil, errRecorderHead
		}
		v := string(bytes.TrimSpace(value))
		switch strings.ToLower(string(name)) {
		case "host":
			req.hosts = append(req.hosts, v)
		case strings.ToLower(caseHeader):
			req.caseID = v
		case "content-length":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || n > recorderBodyMax {
				return req, nil, errRecorderHead
			}
			length = n
		case "transfer-encoding":
			chunked = strings.EqualFold(v, "chunked")
		}
	}
	if chunked {
		return req, func() error { return discardChunked(br) }, nil
	}
	return req, func() error {
		_, err := io.CopyN(io.Discard, br, length)
		return err
	}, nil
}

// discardChunked reads a chunked body and its trailer section, at most
// recorderBodyMax bytes of chunks.
func discardChunked(br *bufio.Reader) error {
	var total int64
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := strings.Cut(strings.TrimSpace(string(line)), ";")
		n, err := strconv.ParseInt(size, 16, 64)
		if err != nil || n < 0 || total+n > recorderBodyMax {
			return errRecorderHead
		}
		total += n
		if n == 0 {
			break
		}
		if _, err := io.CopyN(io.Discard, br, n+2); err != nil {
			return err
		}
	}
	for range recorderLinesMax {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
	}
	return errRecorderHead
}

// byCase returns the requests recorded for the case id.
func (r *recorder) byCase(id string) []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []recorded
	for _, q := range r.reqs {
		if q.caseID == id {
			out = append(out, q)
		}
	}
	return out
}

// close stops accepting, closes every connection and waits for their
// goroutines.
func (r *recorder) close() {
	r.l.Close()
	r.mu.Lock()
	r.closed = true
	for c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
}
