package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// The pidfile and its status file.
//
// `serve -pidfile FILE` writes its process ID to FILE and holds an
// exclusive flock(2) on it while it runs; beside it, FILE.status holds
// the outcome of the last configuration load as one JSON object
// (reloadStatus), replaced atomically (rename) after the start and after
// every reload, whatever asked for it (SIGHUP, `simdedge reload`, POST
// /reload). `simdedge reload` reads both.
//
// Why a lock and a status file, not the PID alone or the admin API:
//   - A PID outlives its process: after a crash the file names a PID the
//     kernel may have given to another program, and SIGHUP's default
//     action ends a process. The lock dies with the process, so a reload
//     that can take the lock knows the file is stale and signals nobody.
//     It also stops a second server from taking over a live pidfile.
//   - A signal has no reply. The status file is the reply: its generation
//     grows by one per outcome, so `reload` waits for the one after its
//     signal. It needs no admin listener (which is optional, and may not
//     listen where the reload runs), and it sits where the operator
//     already pointed the pidfile, a directory the server can write.

// reloadStatus is the content of the status file.
type reloadStatus struct {
	PID int `json:"pid"`
	// Config is the absolute path of the file the server loads ("" for
	// the built-in configuration).
	Config string `json:"config"`
	// Generation is 0 at the start and grows by one per reload outcome.
	Generation uint64 `json:"generation"`
	Applied    bool   `json:"applied"`
	// Error is why the last reload was refused.
	Error string `json:"error,omitempty"`
	// Summary counts what is served now (configSummary).
	Summary string    `json:"summary"`
	Time    time.Time `json:"time"`
}

// statusMaxBytes bounds a status file read (it is a few hundred bytes;
// a refusal's message is the longest part).
const statusMaxBytes = 1 << 20

var (
	errPIDFileHeld = errors.New("-pidfile: another simdedge holds the file (it is running)")
	errPIDFileBad  = errors.New("reload: the pidfile does not hold a process ID")
	errPIDStale    = errors.New("reload: no simdedge holds the pidfile (it is stale: the server stopped)")
)

// pidFile is a server's held pidfile (nil: no -pidfile).
type pidFile struct {
	path   string
	f      *os.File // holds the lock
	status reloadStatus
}

// openPIDFile takes the pidfile: create it, lock it (failing when a live
// server holds it), and write this process's ID. The lock is taken before
// the file is truncated, so a live server's file is never emptied.
func openPIDFile(path, config string) (*pidFile, error) {
	if path == "" {
		return nil, nil
	}
	if config != "" {
		abs, err := filepath.Abs(config)
		if err != nil {
			return nil, err
		}
		config = abs
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("-pidfile: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, errPIDFileHeld
		}
		return nil, fmt.Errorf("-pidfile: lock: %w", err)
	}
	p := &pidFile{path: path, f: f, status: reloadStatus{PID: os.Getpid(), Config: config}}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(p.status.PID)+"\n"), 0)
	}
	if err != nil {
		p.close()
		return nil, fmt.Errorf("-pidfile: %w", err)
	}
	return p, nil
}

func statusPath(pidfile string) string { return pidfile + ".status" }

// record writes the outcome of a configuration load: the start's
// (generation 0) or a reload's.
func (p *pidFile) record(reloadErr error, summary string, first bool) error {
	if p == nil {
		return nil
	}
	if !first {
		p.status.Generation++
	}
	p.status.Applied, p.status.Error, p.status.Time = reloadErr == nil, "", time.Now().UTC()
	if reloadErr != nil {
		p.status.Error = reloadErr.Error()
	} else {
		p.status.Summary = summary
	}
	b, err := json.Marshal(p.status)
	if err != nil {
		return err
	}
	// Write then rename: a reader sees the old status or the new, never
	// half of one.
	tmp := statusPath(p.path) + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, statusPath(p.path))
}

// close removes the status file and the pidfile, then lets the lock go.
func (p *pidFile) close() {
	if p == nil {
		return
	}
	os.Remove(statusPath(p.path))
	os.Remove(p.path)
	p.f.Close()
}

// readPIDFile returns the PID a pidfile names, and errPIDStale when no
// process holds its lock.
func readPIDFile(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("reload: %w", err)
	}
	defer f.Close()
	var buf [32]byte
	n, _ := f.ReadAt(buf[:], 0)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(buf[:n])))
	if err != nil || pid <= 0 {
		return 0, errPIDFileBad
	}
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	switch {
	case err == nil:
		return 0, errPIDStale // nobody holds it; closing f lets the lock go
	case !errors.Is(err, syscall.EWOULDBLOCK):
		return 0, fmt.Errorf("reload: lock: %w", err)
	}
	return pid, nil
}

// readStatus reads a pidfile's status file.
func readStatus(pidfile string) (reloadStatus, error) {
	var st reloadStatus
	f, err := os.Open(statusPath(pidfile))
	if err != nil {
		return st, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, statusMaxBytes))
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return st, errors.New("reload: the status file is not valid JSON")
	}
	return st, nil
}
