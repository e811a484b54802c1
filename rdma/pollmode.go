package rdma

import (
	"fmt"
	"time"
)

// PollMode says how a connection's completion-queue reader waits when the
// queue is empty: ListenConfig.Poll and DialOptions.Poll.
type PollMode uint8

const (
	// PollBlock (the default) parks the reader in Go's network poller
	// as soon as the queue is empty: no CPU while idle, but every
	// request costs a wake-up (a system call or two, and in a process
	// whose goroutines all sleep, a thread wake-up).
	PollBlock PollMode = iota
	// PollBusy keeps polling the queue, yielding the goroutine between
	// polls, until Spin has passed since the connection's last activity
	// (a completion read, a send posted), and only then blocks as
	// PollBlock does. This is what fi_pingpong and RDMA servers on
	// hardware do: a request that arrives within Spin costs no wake-up,
	// at the price of a core kept busy for up to Spin after each one.
	// Over a software provider every empty poll is itself a system call
	// or two (the tcp provider's progress), so the spin costs CPU there
	// even while nothing arrives.
	PollBusy
)

// Spin bounds of PollBusy.
const (
	// DefaultSpin is PollBusy's spin budget when Spin is 0: about two
	// round trips of fi_pingpong over the tcp provider on this machine
	// (35-50 µs, rdma/README.md), so that a peer that answers at once is
	// never waited for in the kernel, and an idle connection gives its
	// core back within 0.1 ms.
	DefaultSpin = 100 * time.Microsecond
	// MaxSpin bounds Spin: a reader spins at most this long after the
	// last activity before it blocks.
	MaxSpin = 10 * time.Millisecond
)

var pollModeNames = [...]string{PollBlock: "block", PollBusy: "busy"}

func (m PollMode) String() string {
	if int(m) < len(pollModeNames) {
		return pollModeNames[m]
	}
	return "invalid"
}

// ParsePollMode parses "block" or "busy" ("" is PollBlock), as written in
// configuration files and upstream target URLs.
func ParsePollMode(s string) (PollMode, error) {
	switch s {
	case "", "block":
		return PollBlock, nil
	case "busy":
		return PollBusy, nil
	}
	return 0, fmt.Errorf(`%w: poll mode must be "block" or "busy"`, ErrConfig)
}

// checkPoll validates a poll mode and its spin budget and returns the
// budget in force: 0 for PollBlock, Spin or DefaultSpin for PollBusy.
func checkPoll(mode PollMode, spin time.Duration) (time.Duration, error) {
	switch {
	case mode > PollBusy:
		return 0, fmt.Errorf(`%w: poll mode must be PollBlock or PollBusy`, ErrConfig)
	case spin < 0 || spin > MaxSpin:
		return 0, fmt.Errorf("%w: spin must be between 0 and %v", ErrConfig, MaxSpin)
	case mode == PollBlock && spin != 0:
		return 0, fmt.Errorf("%w: spin is for the busy poll mode only", ErrConfig)
	case mode == PollBusy && spin == 0:
		return DefaultSpin, nil
	}
	return spin, nil
}
