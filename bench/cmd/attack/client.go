package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"time"
)

const (
	// loopback is where servers listen and attackers connect from.
	loopback = "127.0.0.1"
	// otherClient is the address of the client that is not the attacker
	// (Linux routes all of 127.0.0.0/8 to lo).
	otherClient = "127.0.0.2"
	// dialTimeout bounds one attacker's connect.
	dialTimeout = 2 * time.Second
	// statusLineMax is how much of an answer is read to find its status
	// code: "HTTP/1.1 408 " is 13 bytes.
	statusLineMax = 64
	// host is the Host header of every request.
	host = "attack.test"
)

// dialFrom connects to addr from the local address from (port chosen by
// the kernel).
func dialFrom(from, addr string, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	return d.Dial("tcp", addr)
}

// outcome is how one attacking connection ended.
type outcome struct {
	// at is the time from the connection's start to the answer or close.
	at time.Duration
	// status is the answer's status code; 0 if none came.
	status int
	// open: neither an answer nor a close came before the bound.
	open bool
	// failed: the connection could not be made or used at all.
	failed bool
}

// watch waits, until deadline, for the server to answer on c or close it,
// and says which and when, counted from start.
func watch(c net.Conn, start, deadline time.Time) outcome {
	c.SetReadDeadline(deadline)
	buf := make([]byte, statusLineMax)
	n, err := io.ReadAtLeast(c, buf, len("HTTP/1.1 200"))
	at := time.Since(start)
	if n > 0 {
		return outcome{at: at, status: parseStatus(buf[:n])}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return outcome{at: at, open: true}
	}
	return outcome{at: at}
}

// parseStatus returns the status code of a response beginning "HTTP/1.x
// NNN", or 0.
func parseStatus(b []byte) int {
	rest, ok := bytes.CutPrefix(b, []byte("HTTP/1."))
	if !ok || len(rest) < len("1 200") || rest[1] != ' ' {
		return 0
	}
	code, err := strconv.Atoi(string(rest[2:5]))
	if err != nil || code < 100 || code > 999 {
		return 0
	}
	return code
}
