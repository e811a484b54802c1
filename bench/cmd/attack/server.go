package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	// startTimeout bounds a server's start, to its first accepted dial.
	startTimeout = 10 * time.Second
	// stopGrace is how long a SIGTERMed server gets past its drain
	// timeout before it is killed.
	stopGrace = 3 * time.Second
	// logTail is how much of a failed server's log an error quotes.
	logTail = 2000
)

var errStart = errors.New("attack: simdedge did not start")

// serverSeq numbers the servers' files, which parallel variants write into
// one directory.
var serverSeq atomic.Int64

// server is one simdedge process this suite started, and the backend
// startServer started for it (nil for launch's servers).
type server struct {
	cmd     *exec.Cmd
	addr    string
	backend *backend
	logPath string
	exited  chan struct{}
}

func (s *server) pid() int { return s.cmd.Process.Pid }

// startServer starts a backend and a simdedge process for v, and waits
// until the server accepts connections.
func startServer(ctx context.Context, o *options, v variant) (*server, error) {
	be, err := startBackend()
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		be.close()
		return nil, err
	}
	addr := net.JoinHostPort(loopback, port)
	s, err := launch(ctx, o, configYAML(o, v, addr, be.addr), addr)
	if err != nil {
		be.close()
		return nil, err
	}
	s.backend = be
	return s, nil
}

// launch starts a simdedge process on the configuration cfgYAML and waits
// until it accepts connections on every one of addrs (the listeners the
// configuration names); s.addr is the first. The caller owns any backend.
func launch(ctx context.Context, o *options, cfgYAML string, addrs ...string) (*server, error) {
	n := serverSeq.Add(1)
	cfg := filepath.Join(o.dir, fmt.Sprintf("server-%d.yaml", n))
	if err := os.WriteFile(cfg, []byte(cfgYAML), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(o.dir, fmt.Sprintf("server-%d.log", n))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// -config rather than a positional path: builds before issue 18
	// ignored the positional one.
	cmd := exec.Command(o.bin, "serve", "-config", cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: if the suite dies, its servers do not outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	logf.Close()
	s := &server{cmd: cmd, addr: addrs[0], logPath: logPath, exited: make(chan struct{})}
	go func() { cmd.Wait(); close(s.exited) }()
	deadline := time.Now().Add(startTimeout)
	for _, addr := range addrs {
		for {
			c, err := net.DialTimeout("tcp", addr, time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-s.exited:
				s.stop()
				return nil, fmt.Errorf("%w: exited: %s", errStart, s.logTail())
			case <-ctx.Done():
				s.stop()
				return nil, ctx.Err()
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				s.stop()
				return nil, fmt.Errorf("%w in %s: %s", errStart, startTimeout, s.logTail())
			}
		}
	}
	return s, nil
}

// stop sends SIGTERM to the process this suite started (by PID), kills it
// if it has not exited after its drain and a grace period, and closes the
// backend, if startServer started one.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(drainTimeout + stopGrace):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	if s.backend != nil {
		s.backend.close()
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > logTail {
		b = b[len(b)-logTail:]
	}
	return strings.TrimSpace(string(b))
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before simdedge binds it; the start then fails and says so.
func freePort() (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}
