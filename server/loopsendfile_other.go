//go:build !linux

package server

import "os"

// loopSendfile: there is no event loop here (loop_other.go).
func loopSendfile(*conn, *os.File, int64, int64) bool { return false }

func (c *conn) dropFile() {}
