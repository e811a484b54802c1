package main

import (
	"fmt"
	"strconv"
	"strings"
)

// tally counts the cases of a mapping or normalisation row by where they
// ended: at the backend with a defect, at the backend without one,
// answered by the edge itself with a success or redirect, or refused by it
// (an error status, a reset, a closed connection); the last two grouped by
// how.
type tally struct {
	cases, bad, clean int
	answered, refused outcomes
	notes             []string
}

// outcomes counts what clients saw, in the order first seen.
type outcomes struct {
	keys []string
	n    map[string]int
}

func (o *outcomes) add(k string) {
	if o.n == nil {
		o.n = map[string]int{}
	}
	if o.n[k] == 0 {
		o.keys = append(o.keys, k)
	}
	o.n[k]++
}

// String is "N" or "N (how ×k, ...)".
func (o *outcomes) String() string {
	total := 0
	var groups []string
	for _, k := range o.keys {
		groups = append(groups, fmt.Sprintf("%s ×%d", k, o.n[k]))
		total += o.n[k]
	}
	if total == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(groups, ", "))
}

// add records one case: got are the requests the backend received for
// it, each judged bad or not, with a detail for the notes; out is what the
// client saw (a status, "RST CODE", "GOAWAY CODE", "closed"...). A control
// case is noted but not counted.
func (t *tally) add(control bool, name string, got []recorded, out string, judge func(recorded) (bad bool, detail string)) {
	t.notes = append(t.notes, name+": "+t.note(control, got, out, judge))
	if !control {
		t.cases++
	}
}

func (t *tally) note(control bool, got []recorded, out string, judge func(recorded) (bool, string)) string {
	if len(got) == 0 {
		switch code, err := strconv.Atoi(out); {
		case control:
		case err == nil && code < 400:
			t.answered.add(out)
		default:
			t.refused.add(out)
		}
		return out
	}
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
	switch {
	case control:
	case anyBad:
		t.bad++
	default:
		t.clean++
	}
	return strings.Join(details, ", ") + " → " + out
}

// report is the row's result, "<badLabel>: B of N; refused: R (how ×k,
// ...); answered by the edge: A (...); <cleanLabel>: C", and its notes,
// every case's detail.
func (t *tally) report(badLabel, cleanLabel string) (result, notes string) {
	result = fmt.Sprintf("%s: %d of %d; refused: %s; answered by the edge: %s; %s: %d",
		badLabel, t.bad, t.cases, &t.refused, &t.answered, cleanLabel, t.clean)
	return result, strings.Join(t.notes, "; ")
}
