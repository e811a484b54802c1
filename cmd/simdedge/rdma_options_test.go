package main

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/rdma"
	"github.com/simdedge/simdedge/server/config"
)

// TestRDMAPollMirror: config's rdma poll names and spin default mirror
// package rdma's.
func TestRDMAPollMirror(t *testing.T) {
	if config.RDMAPollBlock != rdma.PollBlock.String() || config.RDMAPollBusy != rdma.PollBusy.String() {
		t.Errorf("config's poll modes %q, %q differ from package rdma's %q, %q",
			config.RDMAPollBlock, config.RDMAPollBusy, rdma.PollBlock, rdma.PollBusy)
	}
	if time.Duration(config.DefaultRDMASpin) != rdma.DefaultSpin {
		t.Errorf("config's spin default %v differs from rdma.DefaultSpin %v", time.Duration(config.DefaultRDMASpin), rdma.DefaultSpin)
	}
	if config.DefaultRDMAPoll != rdma.PollBlock.String() {
		t.Errorf("config's poll default %q is not rdma's zero mode", config.DefaultRDMAPoll)
	}
}

// TestRDMATargetOptions: rdma:// target options, poll and spin included,
// are checked before anything is dialled (this build with or without the
// transport).
func TestRDMATargetOptions(t *testing.T) {
	for _, tc := range []struct{ q, err string }{
		{"provider=tcp&credits=8&message_size=4096", ""},
		{"poll=busy", ""},
		{"poll=busy&spin=50us", ""},
		{"poll=block", ""},
		{"poll=spin", "poll must be"},
		{"spin=50us", "needs poll=busy"},
		{"poll=block&spin=50us", "needs poll=busy"},
		{"poll=busy&spin=1s", "spin must be"},
		{"poll=busy&spin=fast", "spin must be"},
		{"credits=-1", "positive integer"},
		{"wat=1", "unknown rdma target option"},
	} {
		u, err := url.Parse("rdma://127.0.0.1:7471?" + tc.q)
		if err != nil {
			t.Fatal(err)
		}
		target, err := rdmaTarget(u)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want one with %q", tc.q, err, tc.err)
			}
		case !rdma.Supported():
			if !errors.Is(err, errNoRDMA) {
				t.Errorf("%s: error %v, want errNoRDMA in this build", tc.q, err)
			}
		case err != nil || target == nil:
			t.Errorf("%s: %v", tc.q, err)
		}
	}
}
