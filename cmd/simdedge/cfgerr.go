package main

import (
	"fmt"
	"io"
)

// printConfigError prints err, a configuration's errors, one a line, each
// with the command's prefix. Parse joins them (errors.Join), and printing
// the joined error put the prefix on the first line only.
func printConfigError(w io.Writer, err error) {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		fmt.Fprintf(w, "simdedge: %v\n", e)
	}
}
