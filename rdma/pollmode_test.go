package rdma_test

import (
	"errors"
	"testing"
	"time"

	"github.com/simdedge/simdedge/rdma"
)

// Poll modes and spin budgets out of range are configuration errors, in
// every build (the stub checks them before it says ErrNotSupported).
func TestPollConfig(t *testing.T) {
	for _, s := range []string{"", "block", "busy"} {
		m, err := rdma.ParsePollMode(s)
		if err != nil {
			t.Errorf("ParsePollMode(%q): %v", s, err)
		}
		if want := s; want != "" && m.String() != want {
			t.Errorf("ParsePollMode(%q).String() = %q", s, m)
		}
	}
	for _, s := range []string{"Busy", "spin", "busy "} {
		if _, err := rdma.ParsePollMode(s); !errors.Is(err, rdma.ErrConfig) {
			t.Errorf("ParsePollMode(%q) = %v, want ErrConfig", s, err)
		}
	}
	bad := []struct {
		mode rdma.PollMode
		spin time.Duration
	}{
		{rdma.PollBlock, time.Microsecond}, // spin is for busy only
		{rdma.PollBusy, -1},
		{rdma.PollBusy, rdma.MaxSpin + 1},
		{rdma.PollMode(7), 0},
	}
	for _, b := range bad {
		_, err := rdma.ListenMessages(rdma.ListenConfig{Address: "127.0.0.1:0", Poll: b.mode, Spin: b.spin})
		if !errors.Is(err, rdma.ErrConfig) {
			t.Errorf("ListenMessages(poll %v, spin %v) = %v, want ErrConfig", b.mode, b.spin, err)
		}
		_, err = rdma.Dial("127.0.0.1:1", rdma.DialOptions{Poll: b.mode, Spin: b.spin})
		if !errors.Is(err, rdma.ErrConfig) {
			t.Errorf("Dial(poll %v, spin %v) = %v, want ErrConfig", b.mode, b.spin, err)
		}
	}
}
