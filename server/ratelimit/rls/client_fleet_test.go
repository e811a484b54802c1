//go:build fleet

package rls

import (
	"context"
	"sync"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server/rewrite"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/durationpb"
)

// service is an in-process rate-limit service: it admits the first n
// calls, records the requests, and sleeps delay before answering.
type service struct {
	rlsv3.UnimplementedRateLimitServiceServer
	mu    sync.Mutex
	n     int
	delay time.Duration
	reqs  []*rlsv3.RateLimitRequest
}

func (s *service) ShouldRateLimit(ctx context.Context, r *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	over := len(s.reqs) > s.n
	delay := s.delay
	s.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if over {
		return &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OVER_LIMIT, Statuses: []*rlsv3.RateLimitResponse_DescriptorStatus{
			{Code: rlsv3.RateLimitResponse_OK},
			{Code: rlsv3.RateLimitResponse_OVER_LIMIT, DurationUntilReset: durationpb.New(1500 * time.Millisecond)},
		}}, nil
	}
	return &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}, nil
}

func startService(t *testing.T, s *service) string {
	t.Helper()
	ln := testnet.Listen(t)
	g := grpc.NewServer()
	rlsv3.RegisterRateLimitServiceServer(g, s)
	go g.Serve(ln)
	t.Cleanup(g.Stop)
	return ln.Addr().String()
}

// callWait bounds a call in the tests (far above every timeout set).
const callWait = 10 * time.Second

func TestClientOverLimit(t *testing.T) {
	s := &service{n: 2}
	c, err := New(Options{Address: startService(t, s), Domain: "edge",
		Descriptors: []Descriptor{desc("remote_address", "{client_ip}"), desc("path", "{path}")}, Timeout: callWait})
	if err != nil {
		t.Fatal(err)
	}
	env := &rewrite.Env{ClientIP: []byte("192.0.2.1"), Path: []byte("/x")}
	for i := range 3 {
		st, wait := c.Limit(env)
		switch {
		case i < 2 && st != 0:
			t.Fatalf("call %d: status %d, want 0", i, st)
		case i == 2 && (st != StatusOverLimit || wait != 1500*time.Millisecond):
			t.Fatalf("call %d: %d %v, want 429 1.5s", i, st, wait)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reqs[0]
	if r.Domain != "edge" || r.HitsAddend != 1 || len(r.Descriptors) != 2 ||
		r.Descriptors[0].Entries[0].Key != "remote_address" || r.Descriptors[0].Entries[0].Value != "192.0.2.1" ||
		r.Descriptors[1].Entries[0].Value != "/x" {
		t.Errorf("request sent: %v", r)
	}
}

// TestClientFailureModes: a service that refuses connections, and one
// that answers after the timeout, give allow (0) or deny (500) as
// configured; the timeout bounds the call.
func TestClientFailureModes(t *testing.T) {
	down := testnet.RefusingAddr(t)
	slow := startService(t, &service{n: 100, delay: callWait})
	env := &rewrite.Env{ClientIP: []byte("192.0.2.1")}
	for _, tc := range []struct {
		addr string
		mode FailureMode
		want int
	}{{down, FailAllow, 0}, {down, FailDeny, StatusOnError}, {slow, FailAllow, 0}, {slow, FailDeny, StatusOnError}} {
		const timeout = 200 * time.Millisecond
		c, err := New(Options{Address: tc.addr, Domain: "edge", Descriptors: []Descriptor{desc("remote_address", "{client_ip}")},
			FailureMode: tc.mode, Timeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		st, _ := c.Limit(env)
		took := time.Since(start)
		if st != tc.want {
			t.Errorf("%s %s: status %d, want %d", tc.addr, tc.mode, st, tc.want)
		}
		if tc.addr == slow && (took < timeout || took >= callWait) {
			t.Errorf("%s: the call took %v: the %v timeout was not what ended it", tc.mode, took, timeout)
		}
	}
}

func TestNewErrors(t *testing.T) {
	if _, err := New(Options{Address: "nowhere", Domain: "d", Descriptors: []Descriptor{desc("k", "{host}")}}); err != ErrAddress {
		t.Errorf("bad address: %v", err)
	}
	if _, err := New(Options{Address: "127.0.0.1:1", Descriptors: []Descriptor{desc("k", "{host}")}}); err != ErrDomain {
		t.Errorf("no domain: %v", err)
	}
}

// BenchmarkLimit is one ShouldRateLimit round trip over loopback to an
// in-process service that answers at once: the client's share of a
// limited request's cost (expansion, marshalling, gRPC, the wait), with
// the service's own work in the same process. The reference service with
// Redis adds its own: bench/load/globalrl.sh measures that end to end.
func BenchmarkLimit(b *testing.B) {
	s := &service{n: 1 << 62}
	ln := testnet.Listen(b)
	g := grpc.NewServer()
	rlsv3.RegisterRateLimitServiceServer(g, s)
	go g.Serve(ln)
	b.Cleanup(g.Stop)
	c, err := New(Options{Address: ln.Addr().String(), Domain: "edge",
		Descriptors: []Descriptor{desc("remote_address", "{client_ip}")}, Timeout: callWait})
	if err != nil {
		b.Fatal(err)
	}
	env := &rewrite.Env{ClientIP: []byte("192.0.2.1"), Path: []byte("/x")}
	c.Limit(env) // connect
	b.ReportAllocs()
	for b.Loop() {
		if st, _ := c.Limit(env); st != 0 {
			b.Fatal(st)
		}
		s.mu.Lock()
		s.reqs = s.reqs[:0] // the fake keeps what it is asked
		s.mu.Unlock()
	}
}
