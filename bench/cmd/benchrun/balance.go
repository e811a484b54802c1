package main

import (
	"time"

	"github.com/simdedge/simdedge/bench/internal/report"
)

// The balance scenario (area balance, issue 19's Speed budget): proxies in
// front of a pool of backend targets, simdedge balancing round robin (the
// baseline: today's policy, no health state), simdedge balancing p2c with
// passive health on, and nginx's upstream balancing of the same pool. The
// budget: p2c with passive health costs at most 3 % more proxy CPU per
// request than the baseline, over 10 interleaved rounds.

// poolTargets is the pool's size: the examples and tests use three
// targets, the smallest pool where p2c's two choices are not the whole
// pool.
const poolTargets = 3

// The p2c row's passive health: the example values.
const (
	passiveFailures = 5
	passiveEjectFor = 30 * time.Second
)

// Row names of the balance scenario.
const (
	balanceRR    = "simdedge-rr"
	balanceP2C   = "simdedge-p2c"
	balanceNginx = "nginx"
)

// balanceRows are the scenario's simdedge balancings. The baseline turns
// passive health off (consecutive_failures: 0), as round robin was before
// issue 19, so the comparison prices p2c and passive health together.
var (
	balanceBaseline  = Balancing{Policy: "round_robin", ConsecutiveFailures: 0}
	balanceP2CHealth = Balancing{Policy: "p2c", ConsecutiveFailures: passiveFailures, EjectFor: passiveEjectFor}
)

// balanceBench names the rows' benchmark lines in key=value form, so that
// benchstat compares the policies (-col /policy) or the proxies
// (-col /proxy) within the one results file.
var balanceBench = map[string]string{
	balanceRR:    "proxy=simdedge/policy=rr",
	balanceP2C:   "proxy=simdedge/policy=p2c",
	balanceNginx: "proxy=nginx/policy=rr",
}

// balancePairs are the per-round ratios the report gives: the budget's
// ratio first, then simdedge against nginx.
var balancePairs = []report.Pair{
	{Num: balanceP2C, Den: balanceRR},
	{Num: balanceRR, Den: balanceNginx},
	{Num: balanceP2C, Den: balanceNginx},
}

// balanceCompare is the benchstat command that compares the policies, for
// the report's setup line and the README.
const balanceCompare = "go tool benchstat -filter '/proxy:simdedge .unit:cpu-sec/req' -col /policy <run>.txt"

// balanceScenario is the balance area on simdedge's engine (the
// configuration's default when empty) in front of backend's pool.
func balanceScenario(engine string, backend serverSpec) scenario {
	return scenario{kind: "balance", peer: balanceRR, backend: &backend, targets: poolTargets,
		servers: []serverSpec{
			simdedgeBalancer(balanceRR, engine, &balanceBaseline),
			simdedgeBalancer(balanceP2C, engine, &balanceP2CHealth),
			nginxServer(),
		},
		pairs:     balancePairs,
		alternate: true,
		bench:     balanceBench,
		note: "Proxies balance a pool: simdedge `balance: round_robin` with passive health off (the baseline), simdedge `balance: p2c` with `health: {passive: {consecutive_failures: 5, eject_for: 30s}}`, and nginx `upstream` (round robin, keepalive). " +
			"The rows' benchmark lines compare with `" + balanceCompare + "` (policies) or `-filter '/policy:rr .unit:cpu-sec/req' -col /proxy` (simdedge against nginx).",
	}
}
