// Command simdedge runs the simdedge HTTP edge server and proxy.
//
// Usage:
//
//	simdedge                                serve the built-in configuration on 127.0.0.1:8080
//	simdedge serve [-config FILE | FILE] [-listen ADDR] [-pidfile FILE]
//	                                        serve a configuration (SIGTERM/SIGINT drain, SIGHUP reloads FILE)
//	simdedge check [-config FILE | FILE] [-redact] [-q]
//	                                        validate a configuration and print its effective form
//	simdedge reload -pidfile FILE [-config FILE]
//	                                        reload a running server and report the outcome
//	simdedge hash-password [PASSWORD]       print a bcrypt hash for basic_auth
//	simdedge url [-base URL] [URL...]       parse URLs (arguments or lines of stdin; JSON out)
//	simdedge version                        print the version, revision, build time, Go version and SIMD level
//
// Every subcommand prints its usage with -h.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

const usage = `usage:
  simdedge                                 serve the built-in configuration (127.0.0.1:8080)
  simdedge serve [-config FILE | FILE] [-listen ADDR] [-pidfile FILE]
                                           serve FILE (default: the built-in configuration)
  simdedge check [-config FILE | FILE] [-redact] [-q]
                                           validate FILE and print its effective form
  simdedge reload -pidfile FILE [-config FILE]
                                           check FILE, reload the server of the pidfile,
                                           and exit 0 only when the reload was applied
  simdedge hash-password [PASSWORD]        a bcrypt hash for basic_auth (PASSWORD or stdin)
  simdedge url [-base URL] [URL...]        parse URLs (arguments, or lines of stdin)
  simdedge version                         version, revision and build time

"simdedge COMMAND -h" describes a command and its flags.
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
	case "reload":
		return runReload(args[1:], stdout, stderr)
	case "hash-password":
		return runHashPassword(args[1:], os.Stdin, stdout, stderr)
	case "url":
		return runURL(args[1:], os.Stdin, stdout, stderr)
	case "version", "-version", "--version":
		return runVersion(args[1:], stdout, stderr)
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
