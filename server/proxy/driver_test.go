package proxy

import (
	"strconv"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server/internal/faultsrv"
	"github.com/simdedge/simdedge/server/upstream"
)

// TestRetryIntoDownPool503: a GET whose attempt was reset is retried, and
// the failure ejected the only target; the retry finds no target, and the
// answer is the pool's 503 with Retry-After on every engine (one driver,
// upstream.Attempt: the loop's proxy used to answer the earlier reset's
// 502).
func TestRetryIntoDownPool503(t *testing.T) {
	testenv.CheckGoroutines(t)
	bs := backends(t, 1, faultsrv.Behavior{Kind: faultsrv.ResetAfter})
	addr, up := startPool(t, bs, upstream.Options{
		Passive: upstream.PassiveOptions{ConsecutiveFailures: 1, MaxEjectedPercent: 100, EjectFor: time.Minute},
	}, nil)
	s, ra, _ := send(t, client(t), "GET", "http://"+addr+"/", nil)
	if s != 503 {
		t.Fatalf("status %d, want 503", s)
	}
	if n, err := strconv.Atoi(ra); err != nil || n < 1 {
		t.Errorf("Retry-After %q, want seconds", ra)
	}
	if !up.Pool().Snapshot(nil)[0].Ejected {
		t.Error("the resetting target was not ejected")
	}
	if up.Pool().Retries() != 1 {
		t.Errorf("%d retries, want 1", up.Pool().Retries())
	}
}
