package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// H2O is the fastest C origin measured here (issue 31): Debian's h2o 2.2.5,
// one thread, serving responseBody from its file handler, its fastest
// path. Its plain listener also speaks h2c with prior knowledge, so the
// same process serves the origin and the h2 areas.

// h2oName is the row name of the H2O peer.
const h2oName = "h2o"

// errNoH2O: the h2o rows stay empty.
var errNoH2O = errors.New("h2o is not installed (apt-get install h2o)")

// h2oServer runs h2o as an origin (it proxies nothing in these areas).
func h2oServer() serverSpec {
	return serverSpec{name: h2oName, start: func(e *env, port int, upstreams []string, cpu string) (*proc, error) {
		if len(upstreams) > 0 {
			return nil, errors.New("the h2o peer is measured as an origin only")
		}
		return startH2O(e, port, cpu)
	}}
}

// h2oConfig is h2o's configuration: one thread (the server has one CPU),
// no access log (no server here logs), keep-alive timeouts as nginx's,
// and "/" answered by the file that holds responseBody. Run as root, h2o
// would drop to user nobody, who cannot reach benchrun's private scratch
// directory (every request a 403), so it is told to stay root there, as
// nginx's worker does under benchrun.
func h2oConfig(dir string, port int) string {
	var b strings.Builder
	b.WriteString("num-threads: 1\n")
	if os.Geteuid() == 0 {
		b.WriteString("user: root\n")
	}
	b.WriteString("error-log: " + filepath.Join(dir, "error.log") + "\n")
	b.WriteString("http1-request-timeout: 75\n")
	b.WriteString("http2-idle-timeout: 75\n")
	b.WriteString("listen:\n  host: 127.0.0.1\n  port: " + strconv.Itoa(port) + "\n")
	b.WriteString("hosts:\n  default:\n    paths:\n      /:\n        file.file: " + filepath.Join(dir, "body.txt") + "\n")
	return b.String()
}

func startH2O(e *env, port int, cpu string) (*proc, error) {
	if e.h2o == "" {
		return nil, errNoH2O
	}
	dir, err := os.MkdirTemp(e.tmp, "h2o-")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "body.txt"), []byte(responseBody), 0o644); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "h2o.conf")
	if err := os.WriteFile(path, []byte(h2oConfig(dir, port)), 0o644); err != nil {
		return nil, err
	}
	return startProc(h2oName, e.pinned(cpu, e.h2o, "-c", path), dir)
}
