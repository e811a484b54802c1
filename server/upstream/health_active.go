package upstream

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// Defaults of active health.
const (
	DefaultCheckInterval = 5 * time.Second
	DefaultCheckTimeout  = time.Second
	// DefaultHealthyAfter and DefaultUnhealthyAfter are the passes and
	// failures in a row that change a verdict (HAProxy's rise 2, fall 3).
	DefaultHealthyAfter   = 2
	DefaultUnhealthyAfter = 3
	// DefaultExpect: a redirect is a live server too.
	DefaultExpect = "200-399"
	// checkJitter spreads each wait over the last 1/checkJitter of the
	// interval, so the checks of many targets and instances do not fall
	// in step.
	checkJitter = 10
)

// ActiveOptions configure active health checks.
type ActiveOptions struct {
	// Path is what the engine's probe requests (the package does not use
	// it; it travels with the options).
	Path           string
	Interval       time.Duration
	Timeout        time.Duration
	HealthyAfter   int
	UnhealthyAfter int
	// Expect are the statuses that pass (DefaultExpect when empty).
	Expect StatusSet
}

func (o ActiveOptions) withDefaults() ActiveOptions {
	if o.Interval <= 0 {
		o.Interval = DefaultCheckInterval
	}
	if o.Timeout <= 0 {
		o.Timeout = min(DefaultCheckTimeout, o.Interval)
	}
	if o.HealthyAfter <= 0 {
		o.HealthyAfter = DefaultHealthyAfter
	}
	if o.UnhealthyAfter <= 0 {
		o.UnhealthyAfter = DefaultUnhealthyAfter
	}
	if o.Expect.IsZero() {
		o.Expect = MustStatusSet(DefaultExpect)
	}
	return o
}

// Probe performs one check of t over the engine's transport and returns
// the response status. It must return when ctx ends.
type Probe func(ctx context.Context, t *Target) (status int, err error)

// Checker runs the active checks of a pool: one goroutine per target,
// never an event loop, each probing every interval (with jitter) and
// changing the target's verdict after HealthyAfter passes or
// UnhealthyAfter failures in a row. So a target that starts failing is out
// within about UnhealthyAfter x Interval, and back within HealthyAfter x
// Interval of passing again.
type Checker struct {
	p      *Pool
	o      ActiveOptions
	probe  Probe
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartChecks starts active checks of p's targets with probe. Stop the
// Checker before a reload starts the next pool's (targets carried over
// would otherwise be probed twice).
func (p *Pool) StartChecks(o ActiveOptions, probe Probe) *Checker {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Checker{p: p, o: o.withDefaults(), probe: probe, cancel: cancel}
	for _, t := range p.targets {
		c.wg.Add(1)
		go c.run(ctx, t)
	}
	return c
}

// Options are the checker's options with the defaults filled in.
func (c *Checker) Options() ActiveOptions { return c.o }

// Stop ends the checks and waits for their goroutines. Verdicts stay.
func (c *Checker) Stop() {
	c.cancel()
	c.wg.Wait()
}

func (c *Checker) run(ctx context.Context, t *Target) {
	defer c.wg.Done()
	// The first check comes at a random point of the first interval.
	tm := time.NewTimer(time.Duration(rand.Int64N(int64(c.o.Interval))))
	defer tm.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tm.C:
		}
		c.check(ctx, t)
		// Jitter only shortens the wait, so a verdict still comes
		// within healthy_after (unhealthy_after) x interval.
		j := int64(c.o.Interval) / checkJitter
		tm.Reset(c.o.Interval - time.Duration(rand.Int64N(j+1)))
	}
}

// check runs one probe and applies its result.
func (c *Checker) check(ctx context.Context, t *Target) {
	pctx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	status, err := c.probe(pctx, t)
	cancel()
	if ctx.Err() != nil {
		return // stopped: the probe's failure says nothing
	}
	c.p.applyCheck(t, err == nil && c.o.Expect.Has(status), c.o, status, err)
}

// applyCheck records one check result. Only t's checker goroutine calls
// it, so the run counter needs no compare-and-swap.
func (p *Pool) applyCheck(t *Target, ok bool, o ActiveOptions, status int, err error) {
	run := t.checkRun.Load()
	h := Health(t.health.Load())
	if ok {
		t.checksOK.Add(1)
		run = max(run, 0) + 1
		t.checkRun.Store(run)
		if h != HealthHealthy && int(run) >= o.HealthyAfter {
			t.health.Store(uint32(HealthHealthy))
			if t.clearBit(stateUnhealthy) {
				p.log.Info("upstream: target healthy", "target", t.addr, "passes", run)
				p.changed(t)
			}
		}
		return
	}
	t.checksFailed.Add(1)
	run = min(run, 0) - 1
	t.checkRun.Store(run)
	if h != HealthUnhealthy && int(-run) >= o.UnhealthyAfter {
		t.health.Store(uint32(HealthUnhealthy))
		if t.setBit(stateUnhealthy) {
			p.log.Warn("upstream: target unhealthy", "target", t.addr, "failures", -run, "status", status, "error", err)
			p.changed(t)
		}
	}
}
