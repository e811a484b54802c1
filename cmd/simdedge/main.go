// Command simdedge runs the simdedge HTTP edge server and proxy.
//
// Usage:
//
//	simdedge                                serve the built-in configuration on 127.0.0.1:8080
//	simdedge serve [-config FILE | FILE] [-listen ADDR]
//	                                        serve a configuration (SIGTERM/SIGINT drain, SIGHUP reloads FILE)
//	simdedge check [-config FILE | FILE] [-redact]
//	                                        validate a configuration and print its effective form
//	simdedge url                            parse URLs (JSON lines in, components out)
//	simdedge version                        print the version, Go version and SIMD level
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/simdedge/simdedge/asm"
)

// version is set at link time (-ldflags "-X main.version=...") by release
// builds; otherwise the module version from the build info is used.
var version = ""

const usage = `usage:
  simdedge                                 serve the built-in configuration (127.0.0.1:8080)
  simdedge serve [-config FILE | FILE] [-listen ADDR]
                                           serve FILE (default: the built-in configuration)
  simdedge check [-config FILE | FILE] [-redact]
                                           validate FILE and print its effective form
                                           (-redact: secrets hidden as in the admin /config)
  simdedge url                             URLs as JSON lines on stdin
  simdedge version
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return runServe(signalContext(), nil, stdout, stderr)
	}
	switch args[0] {
	case "serve":
		return runServe(signalContext(), args[1:], stdout, stderr)
	case "check":
		return runCheck(args[1:], stdout, stderr)
	case "url":
		return runURL(os.Stdin, stdout, stderr)
	case "version", "-version", "--version":
		fmt.Fprintf(stdout, "simdedge %s %s %s/%s simd=%s\n", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH, asm.Active())
		return 0
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "simdedge: unknown command %q\n%s", args[0], usage)
		return 2
	}
}

// signalContext is cancelled by the first SIGTERM or SIGINT (a second one
// kills the process the default way).
func signalContext() context.Context {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	go func() { <-ctx.Done(); stop() }()
	return ctx
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
