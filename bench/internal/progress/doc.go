// Package progress draws the single status line that benchrun keeps on
// stderr: a bar, what is running, the elapsed time and an estimate of the
// time left. On a terminal the line is redrawn in place; otherwise (a log
// file, CI) it prints a plain line when the running item changes, at most
// every few seconds, so logs stay readable.
package progress
