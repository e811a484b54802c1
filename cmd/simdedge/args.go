package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
)

// Errors of the command line. They name the problem, not the argument: the
// usage text printed after them says what is expected.
var (
	errExtraArgs      = errors.New("simdedge: too many arguments: give one configuration file")
	errConflictConfig = errors.New("simdedge: -config and a positional configuration file differ: give one")
)

// parseConfigArgs parses a subcommand's flags and its positional
// arguments. `serve` and `check` take the configuration file either as
// -config FILE or as a lone positional argument (`simdedge serve my.yaml`):
// before, a positional file was silently ignored and the built-in demo was
// served or checked instead, which an operator could not tell from success.
// Flags may come before or after the file (flag.Parse alone stops at the
// first positional argument, so it resumes after it). A second positional
// argument, or a -config that names another file, is an error; the same
// file given both ways is accepted. *file is set to the file to use.
func parseConfigArgs(fs *flag.FlagSet, args []string, file *string) error {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			break
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			// After the terminator everything is positional.
			positional = append(positional, rest...)
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	switch {
	case len(positional) == 0:
		return nil
	case len(positional) > 1:
		return errExtraArgs
	case *file != "" && filepath.Clean(*file) != filepath.Clean(positional[0]):
		return errConflictConfig
	}
	*file = positional[0]
	return nil
}

// argsFailed reports a command-line error with exit status 2. The
// FlagSet has already printed its own errors (and its flags); the
// positional-argument errors are printed here, with the usage text.
func argsFailed(err error, stderr io.Writer) int {
	if errors.Is(err, errExtraArgs) || errors.Is(err, errConflictConfig) {
		fmt.Fprintf(stderr, "%v\n%s", err, usage)
	}
	return 2
}
