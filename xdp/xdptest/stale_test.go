package xdptest

import (
	"os"
	"testing"
)

func TestStaleName(t *testing.T) {
	for name, want := range map[string]string{
		"sx25552bs": "25552", "sx30419bc": "30419", "sx7as": "7",
		"sx25552b": "", "sx25552bx": "", "ns25552bs": "", "sxabcs": "", "sx1bs2": "",
	} {
		m := staleName.FindStringSubmatch(name)
		got := ""
		if m != nil {
			got = m[1]
		}
		if got != want {
			t.Errorf("%q: PID %q, want %q", name, got, want)
		}
	}
}

func TestLivePIDs(t *testing.T) {
	if !livePIDs()[os.Getpid()%100000] {
		t.Fatal("this process is not among the live PIDs")
	}
}
