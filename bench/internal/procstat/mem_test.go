package procstat

import (
	"os"
	"testing"
)

func TestParseStatus(t *testing.T) {
	// Lines from this machine's /proc/self/status, shortened.
	const status = "Name:\tsimdedge\nState:\tS (sleeping)\nVmPeak:\t 1263764 kB\nVmHWM:\t   19944 kB\nVmRSS:\t   18312 kB\nThreads:\t7\n"
	m, err := parseStatus(status)
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 18312*1024 || m.HWM != 19944*1024 {
		t.Errorf("parseStatus = %+v", m)
	}
	for _, bad := range []string{
		"",
		"Name:\tkthreadd\nState:\tS\n",    // a kernel thread: no Vm lines
		"VmHWM:\t 10 kB\n",                // VmRSS missing
		"VmHWM:\t 10 kB\nVmRSS:\t x kB\n", // not a number
		"VmHWM:\t 10 kB\nVmRSS:\t 5 MB\n", // another unit
		"VmHWM:\t 10 kB\nVmRSS:\t -5 kB\n",
	} {
		if _, err := parseStatus(bad); err == nil {
			t.Errorf("parseStatus(%q) succeeded", bad)
		}
	}
}

func TestMemorySelf(t *testing.T) {
	m, err := Memory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.HWM < m.RSS {
		t.Errorf("Memory(self) = %+v: want 0 < RSS <= HWM", m)
	}
}
