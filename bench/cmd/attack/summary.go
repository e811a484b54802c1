package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// summarize says how a group of connections ended, grouped by kind: each
// status answered, closed without an answer, still open at the bound,
// failed; with the count and the range of times of each group.
// Example: "408 ×200 at 20.1–25.3 s" or "still open ×200 at 60 s".
func summarize(outs []outcome, bound time.Duration) string {
	type group struct {
		key   string
		times []time.Duration
	}
	var groups []*group
	find := func(key string) *group {
		for _, g := range groups {
			if g.key == key {
				return g
			}
		}
		g := &group{key: key}
		groups = append(groups, g)
		return g
	}
	for _, o := range outs {
		var key string
		switch {
		case o.failed:
			key = "failed"
		case o.open:
			key = "still open"
		case o.status != 0:
			key = fmt.Sprintf("%d", o.status)
		default:
			key = "closed without answer"
		}
		g := find(key)
		g.times = append(g.times, o.at)
	}
	var parts []string
	for _, g := range groups {
		switch g.key {
		case "failed":
			parts = append(parts, fmt.Sprintf("failed ×%d", len(g.times)))
		case "still open":
			parts = append(parts, fmt.Sprintf("still open ×%d at %s", len(g.times), fmtSeconds(bound)))
		default:
			parts = append(parts, fmt.Sprintf("%s ×%d at %s", g.key, len(g.times), fmtRange(g.times)))
		}
	}
	if len(parts) == 0 {
		return "no connections"
	}
	return strings.Join(parts, "; ")
}

// fmtRange is "min–max s", or one figure when they round alike.
func fmtRange(ts []time.Duration) string {
	lo, hi := slices.Min(ts), slices.Max(ts)
	a, b := fmtSeconds(lo), fmtSeconds(hi)
	if a == b {
		return a
	}
	return strings.TrimSuffix(a, " s") + "–" + b
}

// fmtSeconds prints a duration in seconds with one decimal below 100 s
// ("0.3 s", "45.1 s", "120 s").
func fmtSeconds(d time.Duration) string {
	s := d.Seconds()
	if s >= 100 {
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

// fmtMB prints bytes in MB (10^6), as the figures are.
func fmtMB(n int64) string {
	return fmt.Sprintf("%.1f MB", float64(n)/1e6)
}
