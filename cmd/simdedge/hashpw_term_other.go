//go:build !linux

package main

import "io"

// readTerminal: off Linux the password is read as a line, echoed at a
// terminal (pipe it in).
func readTerminal(io.Reader, io.Writer) ([]byte, bool, error) { return nil, false, nil }
