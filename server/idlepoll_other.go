//go:build !linux

package server

// idlePoll parks nothing off Linux: idle connections keep their goroutine
// and buffers (idlepoll_linux.go).
type idlePoll struct{}

type gparked struct{}

func newIdlePoll() *idlePoll                   { return nil }
func (*idlePoll) park(*conn) bool              { return false }
func (*idlePoll) wakeAll(bool)                 {}
func (*idlePoll) oldest(any) (*gparked, int64) { return nil, 0 }
func (*idlePoll) reclaim(*gparked, int64) bool { return false }
func streamParks(Stream) bool                  { return false }
