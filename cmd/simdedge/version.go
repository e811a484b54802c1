package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/simdedge/simdedge/asm"
)

// Set at link time by `make build` (-ldflags "-X main.version=... -X
// main.commit=... -X main.date=..."), from git and the clock. The build
// info Go stamps itself is the fallback, but it has no build time and no
// revision where the environment sets -buildvcs=false (or builds outside
// a checkout), which is why the release build stamps all three.
var (
	version = ""
	commit  = ""
	date    = ""
)

const versionSynopsis = `usage: simdedge version

Prints the version (git describe, or the module version), the VCS revision
("-dirty" when built from a modified tree), the build time, the Go version,
the platform and the SIMD level the kernels use. "unknown" marks what the
build did not record; ` + "`make build`" + ` records everything.

`

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", stderr)
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 0 {
		err = usageError{"version: takes no arguments"}
	}
	if err != nil {
		return argsFailed(err, fs, versionSynopsis, stdout, stderr)
	}
	fmt.Fprintf(stdout, "simdedge %s revision=%s built=%s %s %s/%s simd=%s\n", buildVersion(), buildRevision(), orUnknown(date),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, asm.Active())
	return 0
}

// buildVersion is the stamped version, else the module version from the
// build info ("(devel)" in a plain `go build` of a checkout).
func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// buildRevision is the stamped commit, else the VCS revision Go recorded.
func buildRevision() string {
	if commit != "" {
		return commit
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
