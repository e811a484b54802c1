//go:build rdma && cgo

package rdma_test

import (
	"testing"
	"time"

	"github.com/simdedge/simdedge/rdma"
)

// TestStatsWhileClosing: Stats runs while fabrics open and close. Stats
// once took the set of fabrics' lock and then each fabric's, and Close
// the two the other way round: the two deadlocked (CI's -race run of
// TestTransportDisconnect hung in exactly that). Bounded in rounds and
// time.
func TestStatsWhileClosing(t *testing.T) {
	const rounds = 300
	openFabric(t, "tcp") // skips (or fails under REQUIRE_RDMA) without libfabric
	stop := make(chan struct{})
	statsDone := make(chan struct{})
	go func() {
		defer close(statsDone)
		for {
			select {
			case <-stop:
				return
			default:
				rdma.Stats()
			}
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range rounds {
			f, err := rdma.OpenFabric(rdma.Options{Provider: "tcp", Node: loopback})
			if err != nil {
				t.Error(err)
				return
			}
			if err := f.Close(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("opening and closing fabrics while Stats runs did not finish: deadlock")
	}
	close(stop)
	<-statsDone
}
