// Package testproc runs a built simdedge binary as a child process of a
// test: its configuration in a file of the test's temporary directory,
// its output kept, its listener awaited, and at cleanup SIGTERM (to that
// process, by its PID) with a bounded drain. The test modules that drive
// built binaries (interop, fleettest) share it, so that the main module
// holds the one copy and their go.mod files keep their test-only
// dependencies; it imports nothing of the project.
package testproc

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pollEvery spaces the connection attempts that wait for the listener.
const pollEvery = 20 * time.Millisecond

// raceReport is what the race detector prints: a binary built with
// -race that reports fails the test that ran it.
const raceReport = "WARNING: DATA RACE"

// Output is a process's stdout and stderr: its output goroutine writes
// while the test reads.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Options name a process and bound its start and stop.
type Options struct {
	// Name names the process in failures and the configuration file
	// Serve writes (Name.yaml).
	Name string
	// StartWait bounds Serve's wait for the listener; StopWait the
	// drain after SIGTERM, after which the process is killed.
	StartWait, StopWait time.Duration
}

// Proc is a process Serve or Start started.
type Proc struct {
	File    string      // its configuration file, to rewrite before a SIGHUP
	Process *os.Process // to signal it, by its PID
	Out     *Output

	tb      testing.TB
	o       Options
	done    chan struct{} // closed when the process has exited
	waitErr error         // its exit, once done is closed
	stopped bool
}

// Serve writes conf to a file, runs `bin serve -config FILE` (Start) and
// waits until addr accepts connections. The test fails if the process
// exits first or does not listen within StartWait.
func Serve(tb testing.TB, bin, conf, addr string, o Options) *Proc {
	tb.Helper()
	file := filepath.Join(tb.TempDir(), o.Name+".yaml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	p := Start(tb, bin, file, o)
	deadline := time.Now().Add(o.StartWait)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return p
		}
		select {
		case <-p.done:
			tb.Fatalf("%s exited before listening on %s: %v\n%s", o.Name, addr, p.waitErr, p.Out.String())
		case <-time.After(pollEvery):
		}
		if time.Now().After(deadline) {
			tb.Errorf("%s did not listen on %s within %v", o.Name, addr, o.StartWait)
			p.Stop()
			tb.FailNow()
		}
	}
}

// Start runs `bin serve -config file` and returns at once; Stop, also a
// cleanup, ends it.
func Start(tb testing.TB, bin, file string, o Options) *Proc {
	tb.Helper()
	p := &Proc{File: file, Out: &Output{}, tb: tb, o: o, done: make(chan struct{})}
	cmd := exec.Command(bin, "serve", "-config", file)
	cmd.Stdout, cmd.Stderr = p.Out, p.Out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	p.Process = cmd.Process
	go func() { p.waitErr = cmd.Wait(); close(p.done) }()
	tb.Cleanup(p.Stop)
	return p
}

// Stop sends the process SIGTERM and waits for it to exit, within
// StopWait or killed; the test fails if it exits with an error or its
// output holds a race report, and its output is logged when the test
// has failed. Stop is for the test's goroutine; a second call does
// nothing.
func (p *Proc) Stop() {
	if p.stopped {
		return
	}
	p.stopped = true
	p.Process.Signal(syscall.SIGTERM) // the process this test started, by its PID
	select {
	case <-p.done:
		if p.waitErr != nil {
			p.tb.Errorf("%s exited with %v after SIGTERM", p.o.Name, p.waitErr)
		}
	case <-time.After(p.o.StopWait):
		p.Process.Kill()
		<-p.done
		p.tb.Errorf("%s did not stop within %v of SIGTERM", p.o.Name, p.o.StopWait)
	}
	if strings.Contains(p.Out.String(), raceReport) {
		p.tb.Errorf("%s: the race detector reported", p.o.Name)
	}
	if p.tb.Failed() {
		p.tb.Logf("%s output:\n%s", p.o.Name, p.Out.String())
	}
}
