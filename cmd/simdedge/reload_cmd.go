package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

const reloadSynopsis = `usage: simdedge reload -pidfile FILE [-config CONFIG] [-timeout D]

Reloads the server started with "simdedge serve -pidfile FILE" and reports
the outcome:

  1. checks CONFIG as "simdedge check" does; an invalid file is reported
     and the server is left alone;
  2. sends SIGHUP to the process FILE names, if that process still holds
     FILE (a stale pidfile signals nobody);
  3. waits for the server's outcome, which it writes to FILE.status.

Exit status 0 when the reload was applied; 1 when it was refused (the reason
is printed: an invalid file, or a change that needs a restart, after which
the server runs on unchanged), when no outcome came within -timeout, or when
no server holds FILE; 2 for a command-line mistake. CONFIG defaults to the
file the server was started with; when given, it must be that file.
The admin listener's POST /reload does the same over HTTP.

`

// reloadPoll is how often reload looks at the status file.
const reloadPoll = 50 * time.Millisecond

var (
	errReloadTimeout = errors.New("reload: no outcome within -timeout (the server may still be reloading; see its log)")
	errReloadStopped = errors.New("reload: the server stopped before reporting an outcome")
)

// runReload implements `simdedge reload`.
func runReload(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("reload", stderr)
	file := fs.String("config", "", "the server's configuration `FILE` (default: the one it was started with)")
	pidPath := fs.String("pidfile", "", "the `FILE` given to serve -pidfile")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the outcome")
	err := parseConfigArgs(fs, args, file)
	if err == nil && *pidPath == "" {
		err = usageError{"reload: -pidfile is required: the file given to serve -pidfile"}
	}
	if err == nil && *timeout <= 0 {
		err = usageError{"reload: -timeout must be positive"}
	}
	if err != nil {
		return argsFailed(err, fs, reloadSynopsis, stdout, stderr)
	}
	st, err := reloadServer(*file, *pidPath, *timeout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "simdedge reload: %s applied (%s)\n", st.Config, st.Summary)
	return 0
}

// reloadServer checks the configuration, signals the server of pidPath
// and waits for the outcome of the reload after that signal.
func reloadServer(file, pidPath string, timeout time.Duration, stderr io.Writer) (reloadStatus, error) {
	deadline := time.Now().Add(timeout)
	pid, err := readPIDFile(pidPath)
	if err != nil {
		return reloadStatus{}, err
	}
	// The status file appears once the server serves; wait for it.
	st, err := waitStatus(pidPath, pid, deadline, func(reloadStatus) bool { return true })
	if err != nil {
		return st, err
	}
	if st.Config == "" {
		return st, fmt.Errorf("reload: %w", errBuiltinReload)
	}
	if file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return st, fmt.Errorf("reload: %w", err)
		}
		if abs != st.Config {
			return st, fmt.Errorf("reload: the server (pid %d) was started with %s, not %s; it reloads its own file", pid, st.Config, abs)
		}
	}
	if _, err := validateConfig(st.Config, stderr); err != nil {
		return st, fmt.Errorf("reload: %w\nsimdedge reload: the file is invalid; the server was not signalled", err)
	}
	before := st.Generation
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		return st, fmt.Errorf("reload: signal pid %d: %w", pid, err)
	}
	st, err = waitStatus(pidPath, pid, deadline, func(s reloadStatus) bool { return s.Generation > before })
	if err != nil {
		return st, err
	}
	if !st.Applied {
		return st, fmt.Errorf("reload: refused, the server runs on unchanged: %s", st.Error)
	}
	return st, nil
}

// waitStatus polls the status file of pid until done accepts it, the
// deadline passes, or the server lets the pidfile go.
func waitStatus(pidPath string, pid int, deadline time.Time, done func(reloadStatus) bool) (reloadStatus, error) {
	for {
		st, err := readStatus(pidPath)
		if err == nil && st.PID == pid && done(st) {
			return st, nil
		}
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return st, err
		}
		if _, err := readPIDFile(pidPath); err != nil {
			if errors.Is(err, errPIDStale) || errors.Is(err, os.ErrNotExist) {
				return st, errReloadStopped
			}
			return st, err
		}
		if time.Now().After(deadline) {
			return st, errReloadTimeout
		}
		time.Sleep(reloadPoll)
	}
}
