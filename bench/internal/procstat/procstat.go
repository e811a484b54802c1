package procstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of utime and stime in /proc/PID/stat. The kernel
// exports these fields in USER_HZ, which is 100 on every Linux architecture
// Go supports (it is part of the ABI, independent of CONFIG_HZ); reading
// sysconf(_SC_CLK_TCK) would need cgo for the same constant.
const userHZ = 100

// tick is one USER_HZ clock tick.
const tick = time.Second / userHZ

// Field positions in /proc/PID/stat counted after the ")" that ends the
// command name (proc(5) numbers them 3 = state ... 14 = utime, 15 = stime;
// here index 0 is field 3).
const (
	fieldPPID  = 4 - 3
	fieldUtime = 14 - 3
	fieldStime = 15 - 3
)

var errFormat = errors.New("procstat: unexpected /proc/PID/stat format")

// stat is the part of /proc/PID/stat this package uses.
type stat struct {
	ppid int
	cpu  time.Duration
}

// parseStat parses the content of /proc/PID/stat. The command name is in
// parentheses and may itself contain spaces and parentheses, so the fields
// start after the last ')'.
func parseStat(s string) (stat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return stat{}, errFormat
	}
	f := strings.Fields(s[i+1:])
	if len(f) <= fieldStime {
		return stat{}, errFormat
	}
	ppid, err1 := strconv.Atoi(f[fieldPPID])
	ut, err2 := strconv.ParseInt(f[fieldUtime], 10, 64)
	st, err3 := strconv.ParseInt(f[fieldStime], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return stat{}, errFormat
	}
	return stat{ppid: ppid, cpu: time.Duration(ut+st) * tick}, nil
}

func readStat(proc string, pid int) (stat, error) {
	b, err := os.ReadFile(filepath.Join(proc, strconv.Itoa(pid), "stat"))
	if err != nil {
		return stat{}, err
	}
	return parseStat(string(b))
}

// CPUTime returns the user+system CPU time of pid alone.
func CPUTime(pid int) (time.Duration, error) {
	s, err := readStat("/proc", pid)
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	return s.cpu, nil
}

// TreeCPUTime returns the user+system CPU time of pid and of every live
// descendant. Processes that exit between the directory scan and the read
// are skipped: their time is lost, which matters only for a server that
// forks per request, and none of the benchmarked ones does.
func TreeCPUTime(pid int) (time.Duration, error) {
	return treeCPUTime("/proc", pid)
}

func treeCPUTime(proc string, pid int) (time.Duration, error) {
	root, err := readStat(proc, pid)
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	ents, err := os.ReadDir(proc)
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	children := map[int][]int{}
	cpu := map[int]time.Duration{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil || p == pid {
			continue
		}
		s, err := readStat(proc, p)
		if err != nil {
			continue
		}
		children[s.ppid] = append(children[s.ppid], p)
		cpu[p] = s.cpu
	}
	total := root.cpu
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		total += cpu[p]
		queue = append(queue, children[p]...)
	}
	return total, nil
}

// SystemBusy returns the CPU time all CPUs spent on anything but idle and
// I/O wait since boot (user, nice, system, irq, softirq and steal of the
// "cpu" line of /proc/stat). The change over a run, less the CPU time of
// the processes under measurement, is what other processes took.
func SystemBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("procstat: %w", err)
	}
	return parseSystemBusy(string(b))
}

func parseSystemBusy(s string) (time.Duration, error) {
	line, _, _ := strings.Cut(s, "\n")
	f := strings.Fields(line)
	// cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || f[0] != "cpu" {
		return 0, errFormat
	}
	var busy int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, errFormat
		}
		busy += v
	}
	return time.Duration(busy) * tick, nil
}
