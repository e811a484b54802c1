//go:build !linux

package server

// idlePoll parks nothing off Linux: idle connections keep their goroutine
// and buffers (idlepoll_linux.go).
type idlePoll struct{}

func newIdlePoll() *idlePoll      { return nil }
func (*idlePoll) park(*conn) bool { return false }
func (*idlePoll) wake(*conn)      {}
func streamParks(Stream) bool     { return false }
