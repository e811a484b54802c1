package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// systemd socket activation (sd_listen_fds(3)): systemd, or anything that
// follows the same protocol, opens the listening sockets and passes them to
// the service as descriptors 3, 4, ... with LISTEN_FDS (their count),
// LISTEN_PID (the process they are meant for) and LISTEN_FDNAMES (each
// one's FileDescriptorName=, colon-separated). Because the socket outlives
// the process, a restart loses no connection: those that arrive while no
// process serves wait in the socket's accept queue for the next one.

// listenFDsStart is the first passed descriptor (SD_LISTEN_FDS_START).
const listenFDsStart = 3

// maxListenFDs bounds LISTEN_FDS, so that a corrupt value cannot make the
// server walk a huge descriptor range.
const maxListenFDs = 1024

var (
	errListenFDs       = errors.New("simdedge: LISTEN_FDS is not a count of sockets")
	errNotTCPListener  = errors.New("simdedge: a socket passed by systemd is not a listening TCP socket")
	errInheritedLoops  = errors.New("simdedge: loops > 1 on a socket passed by systemd needs ReusePort=yes in its .socket unit")
	errListenFDNameLen = errors.New("simdedge: LISTEN_FDNAMES does not name every socket")
)

// inheritedSocket is a listening socket passed by systemd.
type inheritedSocket struct {
	// name is its FileDescriptorName= (systemd's default is the socket
	// unit's name), for the log.
	name string
	l    *net.TCPListener
}

// inheritedSockets are the passed sockets that no listener has taken yet.
// A listener of the configuration takes the socket bound to its address
// (take), at start or when a reload adds it; the others stay open, so that
// a later reload can still take them.
type inheritedSockets struct {
	mu    sync.Mutex
	socks []inheritedSocket
}

// takeInherited returns the sockets passed to this process, or nil when
// there are none (no LISTEN_PID or LISTEN_FDS, or LISTEN_PID names another
// process: the variables were inherited from a parent they were meant
// for). It unsets
// the three variables, as sd_listen_fds(1) does, so that they do not leak
// into processes started later, and it takes each descriptor into a
// *net.TCPListener (which both engines serve) and closes the original.
func takeInherited() (*inheritedSockets, error) {
	pid, fds, names := os.Getenv("LISTEN_PID"), os.Getenv("LISTEN_FDS"), os.Getenv("LISTEN_FDNAMES")
	os.Unsetenv("LISTEN_PID")
	os.Unsetenv("LISTEN_FDS")
	os.Unsetenv("LISTEN_FDNAMES")
	if pid == "" || pid != strconv.Itoa(os.Getpid()) || fds == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(fds)
	if err != nil || n < 0 || n > maxListenFDs {
		return nil, errListenFDs
	}
	var nameList []string
	if names != "" {
		if nameList = strings.Split(names, ":"); len(nameList) != n {
			return nil, errListenFDNameLen
		}
	}
	s := &inheritedSockets{}
	for i := range n {
		fd := listenFDsStart + i
		name := "fd" + strconv.Itoa(fd)
		if nameList != nil {
			name = nameList[i]
		}
		l, err := fileListener(fd, name)
		if err != nil {
			s.close()
			return nil, err
		}
		s.socks = append(s.socks, inheritedSocket{name: name, l: l})
	}
	return s, nil
}

// fileListener makes a *net.TCPListener of the passed descriptor fd. The
// listener holds a duplicate (close-on-exec, non-blocking); fd itself is
// closed, so that nothing leaks into processes the server starts.
func fileListener(fd int, name string) (*net.TCPListener, error) {
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	l, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("%w: descriptor %d (%q)", errNotTCPListener, fd, name)
	}
	tl, ok := l.(*net.TCPListener)
	if !ok || !isListening(tl) {
		l.Close()
		return nil, fmt.Errorf("%w: descriptor %d (%q)", errNotTCPListener, fd, name)
	}
	return tl, nil
}

// take removes and returns the inherited socket bound to addr (a
// configured "host:port"), or nil. s may be nil (no socket activation).
func (s *inheritedSockets) take(addr string) *net.TCPListener {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, is := range s.socks {
		if sameAddr(addr, is.l.Addr().(*net.TCPAddr)) {
			s.socks = append(s.socks[:i], s.socks[i+1:]...)
			return is.l
		}
	}
	return nil
}

// logUnused warns about each inherited socket no listener has taken: a
// .socket unit and a configuration that disagree about an address.
func (s *inheritedSockets) logUnused(log *slog.Logger) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.socks {
		log.Warn("a socket passed by systemd matches no listener of the configuration", "name", is.name, "addr", is.l.Addr().String())
	}
}

// close closes the sockets no listener took (systemd keeps its own
// copies).
func (s *inheritedSockets) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, is := range s.socks {
		is.l.Close()
	}
	s.socks = nil
}

// sameAddr reports whether a listener configured with addr would listen
// where got is bound. Any unspecified host (":80", "0.0.0.0:80", "[::]:80")
// matches any unspecified bound address, since systemd's ListenStream=80
// binds [::] for both families while Go's ":80" does the same under
// another spelling; a host name is resolved. Port 0 never matches: it asks
// for a fresh port.
func sameAddr(addr string, got *net.TCPAddr) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	p, err := strconv.Atoi(port)
	if err != nil || p == 0 || p != got.Port {
		return false
	}
	if host == "" {
		return got.IP.IsUnspecified()
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsUnspecified() {
			return got.IP.IsUnspecified()
		}
		return ip.Equal(got.IP)
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if ip.Equal(got.IP) {
			return true
		}
	}
	return false
}
