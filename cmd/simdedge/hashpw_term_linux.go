package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readTerminal asks for the password twice with echo off when stdin is a
// terminal (ok false otherwise: the caller reads a line). Echo is turned
// off through termios (x/sys/unix) rather than x/term, which the module
// does not otherwise need.
func readTerminal(stdin io.Reader, stderr io.Writer) (pw []byte, ok bool, err error) {
	f, isFile := stdin.(*os.File)
	if !isFile {
		return nil, false, nil
	}
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, false, nil // not a terminal
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG | unix.ECHONL
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
		return nil, true, fmt.Errorf("hash-password: cannot turn echo off: %w", err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, old)
	r := bufio.NewReader(io.LimitReader(f, 2*hashMaxInput))
	read := func(prompt string) ([]byte, error) {
		fmt.Fprint(stderr, prompt)
		line, err := r.ReadBytes('\n')
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("hash-password: reading the terminal: %w", err)
		}
		return bytes.TrimRight(line, "\r\n"), nil
	}
	first, err := read("Password: ")
	if err != nil {
		return nil, true, err
	}
	again, err := read("Again: ")
	if err != nil {
		return nil, true, err
	}
	if !bytes.Equal(first, again) {
		return nil, true, errPasswordsDiffer
	}
	return first, true, nil
}
