package upstream

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// driverPool is a pool of two targets for the driver's tests; budget
// false takes the only retry token first, so the budget refuses.
func driverPool(t testing.TB, pol RetryPolicy, budget bool) *Pool {
	pol.MinConcurrent = 1
	pol.BudgetPercent = 1
	p := newPool(t, Options{Targets: specs(2), Retry: pol})
	if !budget && !p.budget.TryAcquire(0) {
		t.Fatal("budget token")
	}
	return p
}

var errIO = errors.New("test: i/o")

// at is a clock stopped at now, for Head.
func at(now time.Duration) func() time.Duration { return func() time.Duration { return now } }

// TestAttemptFailed is the driver's decision after a failed attempt, for
// every kind, written, read and fresh, retry policy, method and budget,
// against the rules as the package documents them.
func TestAttemptFailed(t *testing.T) {
	kinds := []Kind{Refused, ConnectTimeout, Handshake, Lost, HeadTimeout, Broken, Cancelled, ClientBody, Gone}
	on, _ := ParseRetryOn([]string{"reset", "timeout", "5xx"})
	policies := []struct {
		name string
		pol  RetryPolicy
	}{
		{"default", RetryPolicy{}},
		{"none", RetryPolicy{Attempts: NoRetries}},
		{"reset,timeout", RetryPolicy{Attempts: 2, On: on}},
	}
	bools := []bool{false, true}
	for _, kind := range kinds {
		for _, written := range bools {
			for _, read := range bools {
				for _, fresh := range bools {
					for _, pc := range policies {
						for _, budget := range bools {
							for _, idem := range bools {
								for _, key := range bools {
									p := driverPool(t, pc.pol, budget)
									var a Attempt
									a.Begin(p, nil, idem, key, nil, 0)
									if s := a.Next(0); s != StepGo {
										t.Fatalf("Next: %v", s)
									}
									x := a.Target()
									got := a.Failed(0, Failure{Err: errIO, Kind: kind, Written: written, Read: read, Fresh: fresh})
									want, reply := wantFailed(&p.opts.Retry, kind, written, read, fresh, budget, idem, key)
									name := kind.String() + "/" + pc.name
									if got != want || got == StepAnswer && a.Reply() != reply {
										t.Errorf("%s written %v read %v fresh %v budget %v idem %v key %v: %v (reply %v), want %v (reply %v)",
											name, written, read, fresh, budget, idem, key, got, a.Reply(), want, reply)
									}
									if inflight := x.InFlight(); got == StepResend && inflight != 1 || got != StepResend && inflight != 0 {
										t.Errorf("%s: %v with %d in flight", name, got, inflight)
									}
									if got == StepRetry && (a.Backoff() <= 0 || a.Backoff() > p.opts.Retry.MaxBackoff) {
										t.Errorf("%s: backoff %v", name, a.Backoff())
									}
									a.Finish()
									if x.InFlight() != 0 {
										t.Errorf("%s: %d in flight after Finish", name, x.InFlight())
									}
									p.Close()
								}
							}
						}
					}
				}
			}
		}
	}
}

// wantFailed states the rules: the client's failures are answered by the
// engine; a pooled connection lost before any response byte is resent
// when the request may go again, whatever the policy; a connection never
// made fails over; an upstream's cancel is answered; anything else is
// retried on the policy's conditions, if it may go again (not written,
// or idempotent or keyed with its body held), with attempts and budget
// left.
func wantFailed(pol *RetryPolicy, kind Kind, written, read, fresh, budget, idem, key bool) (Step, Reply) {
	may := !written || idem || key
	switch {
	case kind == ClientBody:
		return StepAnswer, BadRequestBody
	case kind == Gone:
		return StepAnswer, NoReply
	case kind == Lost && !fresh && !read && may:
		return StepResend, 0
	case kind == Refused || kind == ConnectTimeout || kind == Handshake:
		return StepFailover, 0
	case kind == Cancelled:
		return StepAnswer, BadGateway
	}
	if pol.On.Matches(Result{Outcome: kind.Outcome()}) && may && pol.Attempts > 0 && budget {
		return StepRetry, 0
	}
	if kind == HeadTimeout {
		return StepAnswer, GatewayTimeout
	}
	return StepAnswer, BadGateway
}

// TestAttemptSequence follows requests through several attempts: the
// answers once every target was tried, the resend bound, the status
// retry, the deadlines.
func TestAttemptSequence(t *testing.T) {
	lost := Failure{Err: io.EOF, Kind: Lost, Written: true}
	refused := Failure{Err: errIO, Kind: Refused, Fresh: true}
	t.Run("every target refused is 503", func(t *testing.T) {
		var a Attempt
		a.Begin(driverPool(t, RetryPolicy{}, true), nil, false, false, nil, 0)
		for i := range 2 {
			if s := a.Next(0); s != StepGo {
				t.Fatalf("attempt %d: %v", i, s)
			}
			if s := a.Failed(0, refused); s != StepFailover {
				t.Fatalf("attempt %d failed: %v", i, s)
			}
		}
		if s := a.Next(0); s != StepAnswer || a.Reply() != Unavailable || a.Err() != errIO || a.Last() == nil {
			t.Fatalf("%v %v %v", s, a.Reply(), a.Err())
		}
		a.Finish()
	})
	t.Run("a timeout among refusals is 504", func(t *testing.T) {
		var a Attempt
		a.Begin(driverPool(t, RetryPolicy{}, true), nil, false, false, nil, 0)
		a.Next(0)
		a.Failed(0, refused)
		a.Next(0)
		a.Failed(0, Failure{Err: errIO, Kind: ConnectTimeout, Fresh: true})
		if s := a.Next(0); s != StepAnswer || a.Reply() != GatewayTimeout {
			t.Fatalf("%v %v", s, a.Reply())
		}
		a.Finish()
	})
	t.Run("a stale connection is resent once per attempt", func(t *testing.T) {
		var a Attempt
		a.Begin(driverPool(t, RetryPolicy{Attempts: NoRetries}, true), nil, true, false, nil, 0)
		a.Next(0)
		if s := a.Failed(0, lost); s != StepResend {
			t.Fatalf("first: %v", s)
		}
		if s := a.Failed(0, lost); s != StepAnswer || a.Reply() != BadGateway {
			t.Fatalf("second: %v %v", s, a.Reply())
		}
		a.Finish()
	})
	t.Run("a POST written is not resent", func(t *testing.T) {
		var a Attempt
		a.Begin(driverPool(t, RetryPolicy{}, true), nil, false, false, nil, 0)
		a.Next(0)
		if s := a.Failed(0, lost); s != StepAnswer {
			t.Fatalf("%v", s)
		}
		a.Finish()
	})
	t.Run("a streamed body is not resent", func(t *testing.T) {
		var a Attempt
		a.Begin(driverPool(t, RetryPolicy{}, true), nil, true, true, nil, 0)
		a.BodyStreamed()
		a.Next(0)
		if s := a.Failed(0, lost); s != StepAnswer {
			t.Fatalf("%v", s)
		}
		a.Finish()
	})
	t.Run("a retried status then exhausted is 502", func(t *testing.T) {
		p := driverPool(t, RetryPolicy{Attempts: 3}, true)
		var a Attempt
		a.Begin(p, nil, true, false, nil, 0)
		if a.Next(0) != StepGo || a.Head(200, at(0)) != StepRelay {
			t.Fatal("200 not relayed")
		}
		a.Finish()
		a.Begin(p, nil, true, false, nil, 0)
		for i := range 2 {
			a.Next(0)
			x := a.Target()
			if s := a.Head(503, at(0)); s != StepRetry || x.InFlight() != 0 {
				t.Fatalf("attempt %d: %v, %d in flight", i, s, x.InFlight())
			}
		}
		// Both targets tried: a retry goes to one that took the
		// connection.
		if s := a.Next(0); s != StepGo {
			t.Fatalf("third: %v", s)
		}
		if s := a.Head(503, at(0)); s != StepRetry {
			t.Fatalf("third head: %v", s)
		}
		if s := a.Next(0); s != StepGo {
			t.Fatalf("fourth: %v", s)
		}
		// Attempts spent: the 503 is relayed, and ends with Finish.
		x := a.Target()
		if s := a.Head(503, at(0)); s != StepRelay || x.InFlight() != 1 {
			t.Fatalf("fourth head: %v", s)
		}
		a.Finish()
		if x.InFlight() != 0 {
			t.Fatal("in flight after Finish")
		}
	})
	t.Run("deadlines", func(t *testing.T) {
		p := driverPool(t, RetryPolicy{}, true)
		to := p.opts.Timeouts
		var a Attempt
		start := 5 * time.Second
		a.Begin(p, nil, true, false, nil, start)
		if a.Next(start); a.Left() != to.Try {
			t.Fatalf("left %v, want %v", a.Left(), to.Try)
		}
		// A retry with no time left for its backoff is answered.
		near := start + to.Total - time.Millisecond
		if s := a.Failed(near, Failure{Err: errIO, Kind: Broken, Written: true}); s != StepAnswer {
			t.Fatalf("near the total: %v", s)
		}
		a.Finish()
		a.Begin(p, nil, true, false, nil, start)
		late := start + to.Total - to.Try/2
		if a.Next(late); a.Left() != to.Try/2 {
			t.Fatalf("left %v near the total", a.Left())
		}
		a.Failed(late, Failure{Err: errIO, Kind: Broken, Written: true})
		if s := a.Next(start + to.Total); s != StepAnswer || a.Reply() != GatewayTimeout || a.Err() != ErrTotalTimeout {
			t.Fatalf("after the total: %v %v %v", s, a.Reply(), a.Err())
		}
		a.Finish()
		// A retried status with no time left for its backoff is
		// relayed, not dropped.
		a.Begin(p, nil, true, false, nil, start)
		a.Next(start)
		if s := a.Head(503, at(near)); s != StepRelay {
			t.Fatalf("503 near the total: %v", s)
		}
		a.Finish()
	})
	t.Run("queued", func(t *testing.T) {
		p := newPool(t, Options{Targets: specs(1), MaxConnsPerTarget: 1, QueueTimeout: time.Second})
		hold, _ := p.Select(nil, nil)
		var a Attempt
		w := &Waiter{Notify: func() {}}
		a.Begin(p, nil, true, false, w, 0)
		if s := a.Next(0); s != StepWait {
			t.Fatalf("%v", s)
		}
		if s := a.QueueExpired(); s != StepAnswer || a.Reply() != Unavailable || a.Err() != ErrQueueTimeout {
			t.Fatalf("%v %v", s, a.Err())
		}
		a.Finish()
		p.Done(hold, StatusResult(200))
	})
}

func TestClassify(t *testing.T) {
	timeout := &os.SyscallError{Syscall: "read", Err: os.ErrDeadlineExceeded}
	for _, tc := range []struct {
		err        error
		connecting bool
		want       Kind
	}{
		{syscall.ECONNREFUSED, true, Refused},
		{os.NewSyscallError("connect", syscall.ECONNREFUSED), true, Refused},
		{&net.OpError{Op: "dial", Err: timeout}, true, ConnectTimeout},
		{ErrTotalTimeout, false, HeadTimeout},
		{io.EOF, false, Lost},
		{io.ErrUnexpectedEOF, false, Lost},
		{net.ErrClosed, false, Lost},
		{os.NewSyscallError("read", syscall.ECONNRESET), false, Lost},
		{syscall.EPIPE, false, Lost},
		{&net.OpError{Op: "write", Err: os.NewSyscallError("write", syscall.EPIPE)}, false, Lost},
		{errors.Join(errIO, io.EOF), false, Lost},
		{errIO, false, Broken},
		{os.NewSyscallError("read", syscall.ECONNREFUSED), false, Broken},
	} {
		if got := Classify(tc.err, tc.connecting); got != tc.want {
			t.Errorf("Classify(%v, %v) = %v, want %v", tc.err, tc.connecting, got, tc.want)
		}
	}
}

// TestAttemptAllocs: a request answered by its first attempt drives the
// driver without allocating, with the Attempt on the stack.
func TestAttemptAllocs(t *testing.T) {
	p := driverPool(t, RetryPolicy{}, true)
	n := testing.AllocsPerRun(1000, func() {
		var a Attempt
		a.Begin(p, nil, true, false, nil, 0)
		if a.Next(0) != StepGo || a.Head(200, at(0)) != StepRelay {
			t.Fatal("not relayed")
		}
		a.Finish()
	})
	if n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

// BenchmarkAttempt drives requests answered by their first attempt, by a
// resend on a new connection, and by a failover: none allocates once the
// retry states are pooled.
func BenchmarkAttempt(b *testing.B) {
	for _, bc := range []struct {
		name string
		fail *Failure // the first attempt's failure, if any
	}{
		{"first", nil},
		{"resend", &Failure{Err: io.EOF, Kind: Lost, Written: true}},
		{"failover", &Failure{Err: errIO, Kind: Refused, Fresh: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := driverPool(b, RetryPolicy{}, true)
			b.ReportAllocs()
			for b.Loop() {
				var a Attempt
				a.Begin(p, nil, true, false, nil, 0)
				a.Next(0)
				if bc.fail != nil && a.Failed(0, *bc.fail) == StepFailover {
					a.Next(0)
				}
				a.Head(200, at(0))
				a.Finish()
			}
		})
	}
}

// FuzzAttempt drives requests through the driver with any sequence of
// failures and statuses: every request ends (Next answers within the
// attempt limit), every attempt is Done once (nothing stays in flight) and
// every budget token is returned.
func FuzzAttempt(f *testing.F) {
	f.Add(uint8(2), []byte{0x04, 0x14, 0x31})
	f.Add(uint8(3), []byte{0x81, 0x82, 0x83, 0x84, 0x85})
	f.Add(uint8(1), []byte{0xf3, 0xf3, 0xf3, 0x00})
	f.Fuzz(func(t *testing.T, targets uint8, events []byte) {
		n := int(targets%4) + 1
		p := newPool(t, Options{Targets: specs(n), Retry: RetryPolicy{Attempts: int(targets/4%4) - 1}})
		var a Attempt
		a.Begin(p, nil, targets&0x10 != 0, targets&0x20 != 0, nil, 0)
		now, nexts := time.Duration(0), 0
		for step := StepFailover; step != StepAnswer && step != StepRelay; {
			if step != StepResend {
				if nexts++; nexts > a.maxAttempts()+1 {
					t.Fatalf("%d selections", nexts)
				}
				if step = a.Next(now); step != StepGo {
					break
				}
			}
			var e byte
			if len(events) > 0 {
				e, events = events[0], events[1:]
			}
			now += time.Duration(e) * time.Second / 8
			if e&0x80 != 0 {
				step = a.Head(500+int(e&0x07), at(now))
				continue
			}
			step = a.Failed(now, Failure{Err: errIO, Kind: Kind(e%9 + 1), Written: e&0x10 != 0,
				Read: e&0x20 != 0, Fresh: e&0x40 != 0})
		}
		a.Finish()
		for _, x := range p.Targets() {
			if x.InFlight() != 0 {
				t.Errorf("%s: %d in flight", x.Address(), x.InFlight())
			}
		}
		if r := p.RetriesInFlight(); r != 0 {
			t.Errorf("%d budget tokens held", r)
		}
	})
}
