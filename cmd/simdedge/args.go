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

// usageError is a command-line mistake a subcommand finds after its flags
// parsed (a missing or out-of-range flag): argsFailed prints it, then the
// usage text, and exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return "simdedge " + e.msg }

// newFlagSet returns a subcommand's flag set. Its usage text is printed
// by argsFailed, not by the FlagSet: to stdout with status 0 when it was
// asked for (-h, -help), to stderr with status 2 after a mistake. Before,
// `serve -h` printed the flags to stderr and exited 2, as for an error.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr) // the FlagSet's own error line ("flag provided but not defined")
	fs.Usage = func() {}
	return fs
}

// argsFailed ends a subcommand whose arguments did not parse: -h prints
// synopsis and flags to stdout and exits 0; anything else prints the
// problem (the FlagSet has printed its own) and the same text to stderr,
// with status 2.
func argsFailed(err error, fs *flag.FlagSet, synopsis string, stdout, stderr io.Writer) int {
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout, fs, synopsis)
		return 0
	}
	var ue usageError
	if errors.Is(err, errExtraArgs) || errors.Is(err, errConflictConfig) || errors.As(err, &ue) {
		fmt.Fprintf(stderr, "%v\n", err)
	}
	printUsage(stderr, fs, synopsis)
	return 2
}

func printUsage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprint(w, synopsis)
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}
