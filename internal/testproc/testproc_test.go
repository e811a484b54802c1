package testproc

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeEnv makes the test binary a stand-in for simdedge (fakeServe), so
// that Serve and Stop are tested on a process of their own.
const fakeEnv = "TESTPROC_FAKE_SERVER"

// fakeLife bounds the stand-in's life should its test not stop it.
const fakeLife = 60 * time.Second

var opts = Options{Name: "fake", StartWait: 10 * time.Second, StopWait: 10 * time.Second}

func TestMain(m *testing.M) {
	if os.Getenv(fakeEnv) == "1" {
		os.Exit(fakeServe())
	}
	os.Exit(m.Run())
}

// fakeServe is `serve -config FILE` of the stand-in. FILE holds an
// address to listen on and words: exit (exit with status 3 before
// listening), race (print a race report), fail (exit with status 1 on
// SIGTERM).
func fakeServe() int {
	if len(os.Args) != 4 || os.Args[1] != "serve" || os.Args[2] != "-config" {
		fmt.Fprintln(os.Stderr, "usage: serve -config FILE")
		return 2
	}
	b, err := os.ReadFile(os.Args[3])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	words := strings.Fields(string(b))
	has := func(w string) bool {
		for _, x := range words[1:] {
			if x == w {
				return true
			}
		}
		return false
	}
	if has("exit") {
		return 3
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	ln, err := net.Listen("tcp", words[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer ln.Close()
	fmt.Println("ready")
	if has("race") {
		fmt.Fprintln(os.Stderr, raceReport)
	}
	select {
	case <-term:
	case <-time.After(fakeLife):
	}
	if has("fail") {
		return 1
	}
	return 0
}

// recorder is a testing.TB that keeps the failures of Serve and Stop
// instead of failing the test, so that the test can check them.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Fatal(args ...any)                 { r.Errorf("%s", fmt.Sprint(args...)); runtime.Goexit() }
func (r *recorder) FailNow()                          { runtime.Goexit() }
func (r *recorder) Logf(string, ...any)               {}
func (r *recorder) Helper()                           {}
func (r *recorder) Failed() bool                      { return len(r.failures()) > 0 }

func (r *recorder) failures() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.errs, "\n")
}

// serve runs Serve on the stand-in with conf (after its address), on its
// own goroutine, as a test would.
func serve(t *testing.T, words string) (*Proc, *recorder) {
	t.Setenv(fakeEnv, "1")
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := &recorder{TB: t}
	var p *Proc
	done := make(chan struct{})
	go func() {
		defer close(done)
		p = Serve(r, bin, addr+" "+words, addr, opts)
	}()
	<-done
	return p, r
}

// TestServeAndStop: Serve returns once the process listens, with its
// configuration file and output; Stop ends it without a failure, and a
// second Stop does nothing.
func TestServeAndStop(t *testing.T) {
	p, r := serve(t, "")
	if p == nil {
		t.Fatalf("Serve failed: %s", r.failures())
	}
	if b, err := os.ReadFile(p.File); err != nil || !strings.HasPrefix(string(b), "127.0.0.1:") || !strings.HasSuffix(p.File, "fake.yaml") {
		t.Errorf("configuration file %s: %q %v", p.File, b, err)
	}
	p.Stop()
	select {
	case <-p.done:
	default:
		t.Fatal("Stop returned before the process exited")
	}
	if !strings.Contains(p.Out.String(), "ready") {
		t.Errorf("output %q, want the process's", p.Out.String())
	}
	p.Stop()
	if f := r.failures(); f != "" {
		t.Errorf("failures: %s", f)
	}
}

// TestServeFailures: a process that exits before listening, one that
// exits with an error on SIGTERM and one whose output holds a race
// report each fail the test, naming what happened.
func TestServeFailures(t *testing.T) {
	for _, tc := range []struct{ words, want string }{
		{"exit", "fake exited before listening on"},
		{"fail", "fake exited with exit status 1 after SIGTERM"},
		{"race", "fake: the race detector reported"},
	} {
		t.Run(tc.words, func(t *testing.T) {
			p, r := serve(t, tc.words)
			if p != nil {
				p.Stop()
			}
			if f := r.failures(); !strings.Contains(f, tc.want) {
				t.Errorf("failures %q, want %q", f, tc.want)
			}
		})
	}
}
