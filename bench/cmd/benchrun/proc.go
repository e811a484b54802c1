package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a server gets to exit after SIGTERM before its
// process group is killed.
const stopGrace = 5 * time.Second

// tailBuffer keeps the last bytes a process wrote, for error notes.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailMax = 4096

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = t.buf[len(t.buf)-tailMax:]
	}
	return len(p), nil
}

// Last returns the last non-empty line, trimmed, for a one-line note.
func (t *tailBuffer) Last() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// proc is a server process that benchrun started. Every proc is registered
// in procs until it has been stopped, so that an interrupted run stops
// exactly the processes it started and no others.
type proc struct {
	name   string
	cmd    *exec.Cmd
	out    *tailBuffer
	exited chan struct{}
	err    error
}

var (
	procsMu sync.Mutex
	procs   = map[*proc]bool{}
)

// ownProcAttr puts a child in its own process group (so that its own
// children, nginx's workers, can be signalled with it and only with it) and
// asks the kernel to kill it if benchrun dies without cleaning up.
func ownProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// startProc starts argv in the background.
func startProc(name string, argv []string, dir string) (*proc, error) {
	return startProcEnv(name, argv, dir, nil)
}

// startProcEnv is startProc with env ("KEY=value") added to benchrun's
// own environment.
func startProcEnv(name string, argv []string, dir string, env []string) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	out := &tailBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = ownProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{name: name, cmd: cmd, out: out, exited: make(chan struct{})}
	procsMu.Lock()
	procs[p] = true
	procsMu.Unlock()
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// pid is the server's process ID (taskset execs the server, so it is the
// server's own PID, not taskset's).
func (p *proc) pid() int { return p.cmd.Process.Pid }

// alive reports whether the process has not exited.
func (p *proc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM to the process, waits, then kills its process group
// (the group benchrun created for it in startProc).
func (p *proc) stop() {
	defer func() {
		procsMu.Lock()
		delete(procs, p)
		procsMu.Unlock()
	}()
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
	}
	// The group may still hold children (nginx workers) even after the
	// leader exited.
	_ = syscall.Kill(-p.pid(), syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(stopGrace):
	}
}

// stopAll stops every process still registered.
func stopAll() {
	procsMu.Lock()
	var ps []*proc
	for p := range procs {
		ps = append(ps, p)
	}
	procsMu.Unlock()
	for _, p := range ps {
		p.stop()
	}
}

// runCmd runs a short command to completion and returns its combined
// output; on cancellation its whole process group is killed.
func runCmd(ctx context.Context, dir string, argv ...string) ([]byte, error) {
	out, _, err := runCmdUsage(ctx, dir, argv...)
	return out, err
}

// runCmdUsage is runCmd that also returns the user+system CPU time of the
// process (its rusage at exit; children it waited for included).
func runCmdUsage(ctx context.Context, dir string, argv ...string) ([]byte, time.Duration, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = ownProcAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err := cmd.Run()
	if err != nil && !errors.Is(ctx.Err(), context.Canceled) {
		err = fmt.Errorf("%s: %w", strings.Join(argv, " "), err)
	}
	var usage time.Duration
	if cmd.ProcessState != nil {
		usage = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	return out.Bytes(), usage, err
}
