package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/bcrypt"
)

// hashMaxCost bounds -cost: basic_auth runs bcrypt on the server for every
// uncached credential, and each step doubles the work (cost 10 takes
// 50-100 ms; 14 already takes over a second), so a higher cost makes a
// hash that serves nobody well, and cost 31 would keep this command busy
// for days.
const hashMaxCost = 14

// hashMaxInput bounds what is read from stdin: bcrypt uses 72 bytes.
const hashMaxInput = 4096

var (
	errEmptyPassword   = errors.New("hash-password: empty password")
	errLongPassword    = errors.New("hash-password: password longer than 72 bytes (bcrypt uses only 72)")
	errPasswordsDiffer = errors.New("hash-password: the two passwords differ")
)

const hashSynopsis = `usage: simdedge hash-password [-cost N] [PASSWORD]

Prints a bcrypt hash of PASSWORD for a basic_auth users entry:

  basic_auth: {users: {alice: "$2a$10$..."}}

Without PASSWORD (which the shell history keeps), the password is the first
line of standard input: "printf %s "$PW" | simdedge hash-password"; at a
terminal it is asked for twice, without echo. bcrypt reads 72 bytes at
most: a longer password is refused rather than cut.

`

func runHashPassword(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("hash-password", stderr)
	cost := fs.Int("cost", bcrypt.DefaultCost, fmt.Sprintf("bcrypt cost, %d to %d: each step doubles the time a check takes", bcrypt.MinCost, hashMaxCost))
	err := fs.Parse(args)
	if err == nil && fs.NArg() > 1 {
		err = usageError{"hash-password: give one password (quote it if it has spaces)"}
	}
	if err == nil && (*cost < bcrypt.MinCost || *cost > hashMaxCost) {
		err = usageError{fmt.Sprintf("hash-password: -cost must be %d to %d", bcrypt.MinCost, hashMaxCost)}
	}
	if err != nil {
		return argsFailed(err, fs, hashSynopsis, stdout, stderr)
	}
	var pw []byte
	if fs.NArg() == 1 {
		pw = []byte(fs.Arg(0))
	} else if pw, err = readPassword(stdin, stderr); err != nil {
		fmt.Fprintf(stderr, "simdedge %v\n", err)
		return 1
	}
	switch {
	case len(pw) == 0:
		err = errEmptyPassword
	case len(pw) > 72:
		err = errLongPassword
	}
	if err != nil {
		fmt.Fprintf(stderr, "simdedge %v\n", err)
		return 1
	}
	h, err := bcrypt.GenerateFromPassword(pw, *cost)
	if err != nil {
		fmt.Fprintf(stderr, "simdedge hash-password: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", h)
	return 0
}

// readPassword reads the password from stdin: at a terminal, twice with
// echo off (readTerminal); otherwise the first line, without its line
// ending, so that `echo pw |` and `printf pw |` give the same hash.
func readPassword(stdin io.Reader, stderr io.Writer) ([]byte, error) {
	if pw, ok, err := readTerminal(stdin, stderr); ok {
		return pw, err
	}
	line, err := bufio.NewReader(io.LimitReader(stdin, hashMaxInput)).ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, fmt.Errorf("hash-password: reading standard input: %w", err)
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}
