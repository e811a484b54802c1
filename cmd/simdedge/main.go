// Command simdedge runs the simdedge HTTP edge server and proxy.
//
// Usage:
//
//	simdedge version    print the version, Go version and SIMD level
package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/simdedge/simdedge/asm"
)

// version is set at link time (-ldflags "-X main.version=...") by release
// builds; otherwise the module version from the build info is used.
var version = ""

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := "version"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "url":
		return runURL(os.Stdin, stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "simdedge %s %s %s/%s simd=%s\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, asm.Active())
		return 0
	default:
		fmt.Fprintf(stderr, "simdedge: unknown command %q\nusage: simdedge version\n", cmd)
		return 2
	}
}

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}
