package xdptest

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"
)

// staleName matches the namespaces NewVethQueues names: "sx", the
// creating process's PID modulo 100,000, a letter, and "s" or "c".
var staleName = regexp.MustCompile(`^sx([0-9]+)[a-z][sc]$`)

// staleAge is how old a namespace must be before it may count as left
// behind: no test holds its pair this long.
const staleAge = 10 * time.Minute

var sweepOnce sync.Once

// sweepStale deletes the namespaces a killed test run left behind (its
// t.Cleanup never ran): ours by name, older than staleAge, and made by a
// process that no longer exists (no live PID has the same value modulo
// 100,000), so a namespace a running test holds is never touched.
func sweepStale(ip string) {
	ents, err := os.ReadDir("/run/netns")
	if err != nil {
		return
	}
	live := livePIDs()
	for _, e := range ents {
		m := staleName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		if live[n] {
			continue
		}
		if fi, err := os.Stat(filepath.Join("/run/netns", e.Name())); err != nil || time.Since(fi.ModTime()) < staleAge {
			continue
		}
		Run(ip, "netns", "del", e.Name())
	}
}

// livePIDs is the set of the running processes' PIDs modulo 100,000, as
// namespace names carry them.
func livePIDs() map[int]bool {
	live := map[int]bool{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return live
	}
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			live[pid%100000] = true
		}
	}
	return live
}
