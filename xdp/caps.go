package xdp

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Capability bits (linux/capability.h) the transport needs: CAP_NET_ADMIN
// to attach to an interface, CAP_NET_RAW for AF_XDP sockets, CAP_BPF (or
// the older catch-all CAP_SYS_ADMIN) to load the program.
const (
	capNetAdmin = 12
	capNetRaw   = 13
	capSysAdmin = 21
	capBPF      = 39
)

// checkCapabilities fails with ErrPermission, naming what is missing,
// when the process's effective capabilities cannot run the transport. It
// asks before trying, so the operator learns every missing capability at
// once rather than one EPERM at a time.
func checkCapabilities() error {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return nil // no procfs: let the syscalls answer
	}
	defer f.Close()
	eff, ok := effectiveCaps(bufio.NewScanner(f))
	if !ok {
		return nil
	}
	if missing := missingCaps(eff); missing != "" {
		return fmt.Errorf("%w (missing %s)", ErrPermission, missing)
	}
	return nil
}

// effectiveCaps reads the CapEff line of /proc/<pid>/status.
func effectiveCaps(sc *bufio.Scanner) (uint64, bool) {
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			c, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return c, err == nil
		}
	}
	return 0, false
}

// missingCaps names the needed capabilities absent from eff, "" if none.
func missingCaps(eff uint64) string {
	has := func(c uint) bool { return eff&(1<<c) != 0 }
	var m []string
	if !has(capBPF) && !has(capSysAdmin) {
		m = append(m, "CAP_BPF")
	}
	if !has(capNetAdmin) {
		m = append(m, "CAP_NET_ADMIN")
	}
	if !has(capNetRaw) {
		m = append(m, "CAP_NET_RAW")
	}
	return strings.Join(m, ", ")
}
