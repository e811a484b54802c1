package main

import (
	"fmt"
	"strings"
)

// tally counts the cases of a mapping or normalisation row by where they
// ended: at the backend with a defect, at the backend without one, or
// refused by the edge (no request at the backend), grouped by how.
type tally struct {
	cases, bad, clean int
	refused           []string
	refusedN          map[string]int
	notes             []string
}

// add records one case: got are the requests the backend received for
// it, each judged bad or not, with a detail for the notes; out is what the
// client saw, the refusal when the backend got nothing. A control case is
// noted but not counted.
func (t *tally) add(control bool, name string, got []recorded, out string, judge func(recorded) (bad bool, detail string)) {
	var note string
	switch {
	case len(got) > 0:
		anyBad := false
		var details []string
		for _, q := range got {
			bad, d := judge(q)
			anyBad = anyBad || bad
			details = append(details, d)
		}
		if len(got) > 1 {
			details = append(details, fmt.Sprintf("%d requests", len(got)))
		}
		note = strings.Join(details, ", ") + " → " + out
		switch {
		case control:
		case anyBad:
			t.bad++
		default:
			t.clean++
		}
	default:
		note = out
		if !control {
			if t.refusedN == nil {
				t.refusedN = map[string]int{}
			}
			if t.refusedN[out] == 0 {
				t.refused = append(t.refused, out)
			}
			t.refusedN[out]++
		}
	}
	if !control {
		t.cases++
	}
	t.notes = append(t.notes, name+": "+note)
}

// report is the row's result and notes: "<badLabel>: B of N; not forwarded: R
// (how ×k, ...); <cleanLabel>: C", and every case's detail.
func (t *tally) report(badLabel, cleanLabel string) (result, notes string) {
	var groups []string
	n := 0
	for _, k := range t.refused {
		groups = append(groups, fmt.Sprintf("%s ×%d", k, t.refusedN[k]))
		n += t.refusedN[k]
	}
	result = fmt.Sprintf("%s: %d of %d; not forwarded: %d", badLabel, t.bad, t.cases, n)
	if n > 0 {
		result += " (" + strings.Join(groups, ", ") + ")"
	}
	result += fmt.Sprintf("; %s: %d", cleanLabel, t.clean)
	return result, strings.Join(t.notes, "; ")
}
