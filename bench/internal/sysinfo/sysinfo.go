package sysinfo

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
)

// Info describes the machine and the code under test.
type Info struct {
	Host     string
	CPUModel string
	// Flags are the CPU flags relevant to the kernels, in a fixed order.
	Flags   []string
	CPUs    int
	Kernel  string
	Go      string
	Commit  string
	Dirty   bool
	LoadAvg string
}

// simdFlags are the /proc/cpuinfo flags that the asm dispatch or the peers
// (simdjson-go: avx2 + pclmulqdq) depend on.
var simdFlags = []string{"sse4_2", "pclmulqdq", "avx", "avx2", "bmi2", "avx512f", "avx512bw", "avx512vl", "avx512vbmi", "avx512vbmi2"}

// Collect gathers Info; repo is the repository root for the commit.
// Fields it cannot read are left empty rather than failing the run.
func Collect(repo string) Info {
	in := Info{CPUs: runtime.NumCPU(), Go: runtime.Version(), LoadAvg: LoadAvg()}
	in.Host, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		in.CPUModel, in.Flags = parseCPUInfo(f)
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		in.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("git", "-C", repo, "rev-parse", "--short=12", "HEAD").Output(); err == nil {
		in.Commit = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=no").Output(); err == nil {
		in.Dirty = len(strings.TrimSpace(string(out))) > 0
	}
	return in
}

// parseCPUInfo returns the first "model name" and the SIMD flags present
// in the first "flags" line.
func parseCPUInfo(f *os.File) (model string, flags []string) {
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	var all []string
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			if model == "" {
				model = strings.TrimSpace(v)
			}
		case "flags":
			if all == nil {
				all = strings.Fields(v)
			}
		}
	}
	for _, s := range simdFlags {
		if slices.Contains(all, s) {
			flags = append(flags, s)
		}
	}
	return model, flags
}

// LoadAvg returns the 1, 5 and 15 minute load averages from /proc/loadavg,
// or "" when unavailable.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	const loadFields = 3
	if len(f) < loadFields {
		return ""
	}
	return strings.Join(f[:loadFields], " ")
}
