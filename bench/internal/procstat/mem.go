package procstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// kib is the unit of the Vm* lines of /proc/PID/status ("kB" there means
// KiB: the kernel prints pages shifted by PAGE_SHIFT-10).
const kib = 1024

// Mem is a process's resident memory, in bytes.
type Mem struct {
	// RSS is the resident set now (VmRSS).
	RSS int64
	// HWM is the peak resident set since the process started (VmHWM),
	// which catches a peak that falls between two samples.
	HWM int64
}

// Memory returns pid's resident memory from /proc/PID/status.
func Memory(pid int) (Mem, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return Mem{}, fmt.Errorf("procstat: %w", err)
	}
	return parseStatus(string(b))
}

// parseStatus reads the VmRSS and VmHWM lines of /proc/PID/status
// ("VmRSS:\t  123456 kB"). Both must be present: a kernel thread or a
// zombie has neither, and a zero would read as a measurement.
func parseStatus(s string) (Mem, error) {
	var m Mem
	var rss, hwm bool
	for line := range strings.Lines(s) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return Mem{}, errFormat
		}
		v, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || v < 0 {
			return Mem{}, errFormat
		}
		if name == "VmRSS" {
			m.RSS, rss = v*kib, true
		} else {
			m.HWM, hwm = v*kib, true
		}
	}
	if !rss || !hwm {
		return Mem{}, errFormat
	}
	return m, nil
}
