package sysinfo

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestParseCPUInfo(t *testing.T) {
	const text = "processor\t: 0\nmodel name\t: Test CPU @ 3GHz\nflags\t\t: fpu sse4_2 avx avx2 bmi2 avx512f avx512bw\n\nprocessor\t: 1\nmodel name\t: Other\nflags\t\t: fpu\n"
	p := filepath.Join(t.TempDir(), "cpuinfo")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	model, flags := parseCPUInfo(f)
	if model != "Test CPU @ 3GHz" {
		t.Errorf("model = %q", model)
	}
	if want := []string{"sse4_2", "avx", "avx2", "bmi2", "avx512f", "avx512bw"}; !slices.Equal(flags, want) {
		t.Errorf("flags = %v, want %v", flags, want)
	}
}

func TestCollect(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	in := Collect("../../..")
	if in.CPUModel == "" || in.CPUs < 1 || !strings.HasPrefix(in.Go, "go") || len(strings.Fields(in.LoadAvg)) != 3 {
		t.Errorf("Collect = %+v", in)
	}
}
