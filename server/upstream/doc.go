// Package upstream is the policy of upstream pools, written once for every
// engine: which target an attempt goes to, whether a target is healthy,
// whether a failed attempt is retried, and whether a request may wait for
// a connection. The engines (the event loop, the goroutine proxy, message
// targets) do the I/O and report what happened; they never decide where a
// request goes. The package does no I/O of its own except through the
// engine's Probe, and imports nothing of the server.
//
// # Using a pool
//
// An engine builds a Pool with New, then per request:
//
//	key := p.Key(req)               // hash key, nil unless balance: hash
//	t, err := p.SelectNext(key, &rs) // counts the attempt in flight
//	... connect, send, read the head ...
//	p.Done(t, upstream.StatusResult(status)) // or Result{Outcome: ConnectFailure} ...
//	switch p.Decide(&rs, t, facts) {   // Stop, Failover or Retry (after p.Backoff(&rs))
//	}
//	p.Finish(&rs)
//
// Select fails with ErrNoHealthy, ErrExhausted or (with a connection cap)
// ErrFull; the engine answers 503 with Retry-After (Pool.RetryAfter). With
// max_conns_per_target, Acquire queues a Waiter instead of failing (event
// loops: it never blocks) and AcquireWait blocks (goroutines).
// AcquireNext and AcquireNextWait are SelectNext through that queue
// (engine.go).
//
// The engines do not call these one by one: every path (server/proxy's
// goroutine, message and HTTP/2 paths, the event loop's exchanges in
// server/loopproxy_linux.go) drives its attempts through one Attempt
// (attempt.go), which does:
//
//	a.Begin(p, key, idempotent, idempotencyKey, waiter, now)
//	defer a.Finish()
//	for a.Next(now) == StepGo {     // else answer as a.Reply() says
//	    ... connect, send, read the head ...
//	    on an error: a.Failed(now, Failure{Kind: Classify(err, connecting), ...})
//	        StepResend (a stale pooled connection), StepFailover,
//	        StepRetry (after a.Backoff()) or StepAnswer
//	    on a head: a.Head(status, clock): StepRelay or StepRetry
//	}
//
// See docs/decisions/0018-attempt-driver.md.
//
// Selection takes no lock, reads no clock and allocates nothing; Done
// touches the target's own counters (one cache line). Targets hold their
// state in atomic fields, so any number of loops and goroutines share a
// pool.
//
// # Balance policies (balance_*.go)
//
//   - round_robin (default): smooth weighted round robin, nginx's sequence
//     (weights 5,1,1 give a a b a c a a), precomputed and walked with one
//     atomic counter.
//   - least_conn: fewest attempts in flight per unit of weight; ties go
//     round robin.
//   - p2c: two targets drawn by weight, the less loaded (in flight per
//     weight) wins.
//   - random: weighted random.
//   - hash: consistent hashing on a Maglev table of 65537 entries, built
//     from the target addresses and weights with a fixed hash (FNV-1a and
//     a MurmurHash3 finaliser, no seed): every instance with the same
//     targets sends a key to the same target, across restarts. When one of
//     N targets leaves, about 1/N of the keys move (measured: 0.101 for
//     N=10, 0.038 for N=30; TestHashShareMoved). Keys: header:NAME,
//     cookie:NAME, query:NAME, client_ip, path (HashKey.Extract over a
//     KeySource, which server.Request satisfies).
//
// Ineligible targets (ejected, failing checks, already tried, at their
// cap) are passed over: the hash policy walks on to the next table
// entries, so a key's fallback is itself sticky and other keys stay put.
//
// # Health (health_passive.go, health_active.go)
//
// Passive: consecutive_failures (default 5) failed attempts in a row
// (connect failure, reset, timeout, 5xx) eject a target for eject_for
// (default 30s); each repeat ejection without a success in between lasts
// once more as long, up to 300s. Never more than max_ejected (default 50%,
// rounded down) of a pool is ejected at once. If more targets than that are
// unavailable (ejected or failing active checks), the pool is in panic
// mode and routes to all of them, as Envoy does: the health signal is then
// more likely wrong than the remaining targets able to carry everything.
// With max_ejected 100% there is no panic mode, and a pool whose targets
// are all down fails selection with ErrNoHealthy.
//
// Active: a Checker probes each target on its own goroutine with the
// engine's Probe every interval (default 5s; jitter makes a wait up to
// 10% shorter, never longer), timeout default 1s; healthy_after (2)
// passes or unhealthy_after (3) failures in a row change the verdict, so
// a target is out within unhealthy_after x interval of failing and back
// within healthy_after x interval of passing; expect (default "200-399")
// are the passing statuses. Transitions are logged with slog. A target is unknown until
// decided, and unknown counts as healthy.
//
// Snapshot reports every target's health, ejection, in-flight count and
// counters, for metrics and the admin listener.
//
// # Retries (retry.go, budget.go)
//
// Decide is the decision: connect failures always fail over to another
// target (nothing was sent) without spending a retry or the budget;
// anything else is retried only on the listed conditions (default
// connect_failure, reset, 502, 503, 504), only when MayResend holds (not
// one byte written, or an idempotent method with a replayable body, or an
// Idempotency-Key), only while attempts remain (default 1 retry), and only
// within the budget: retries in flight at most 20% of the requests in
// flight, with a floor of 3 (Envoy). Retries wait BackoffFor: 25ms doubled
// per retry, capped at 10x, with jitter over the upper half. Timeouts
// (connect 2s, response_header 30s, try 30s, total 60s) are values the
// engines enforce; TryDeadline combines try and total.
//
// # Reloads
//
// New with Options.Previous keeps the Target (health, ejection, counters,
// the engine's Slot) of every address that remains; Departed lists those
// that left, whose connections the engine drains. Target.Retire marks
// them (Retired, Reusable), and Target.Downs counts the times a target went
// down, so an engine can tell connections pooled before that.
package upstream
