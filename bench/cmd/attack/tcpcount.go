package main

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// tcpEstablished is the ESTABLISHED state in /proc/net/tcp (the kernel's
// TCP_ESTABLISHED, printed in hex).
const tcpEstablished = "01"

var errTCPFormat = errors.New("attack: unexpected /proc/net/tcp format")

// establishedOnPort counts IPv4 sockets in ESTABLISHED state whose local
// port is port, from /proc/net/tcp.
func establishedOnPort(port int) (int, error) {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0, err
	}
	return countEstablished(string(b), port)
}

// countEstablished parses /proc/net/tcp: a header line, then one socket a
// line, "sl local_address rem_address st ...", addresses as HEXIP:HEXPORT.
func countEstablished(s string, port int) (int, error) {
	lines := strings.Split(s, "\n")
	if len(lines) == 0 || !strings.Contains(lines[0], "local_address") {
		return 0, errTCPFormat
	}
	n := 0
	for _, line := range lines[1:] {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 {
			return 0, errTCPFormat
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			return 0, errTCPFormat
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil {
			return 0, errTCPFormat
		}
		if int(p) == port && f[3] == tcpEstablished {
			n++
		}
	}
	return n, nil
}
