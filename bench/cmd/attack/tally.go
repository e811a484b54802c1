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
	// controlsFailed names the controls that did not end as expected:
	// the setup, not the edge, is then what the row measures.
	controlsFailed []string
}

// role is what a case is for: an attack, counted, or a control that shows
// the setup works, noted and checked but not counted.
type role int

const (
	attack role = iota
	// controlForwarded: the backend should get it, without a defect.
	controlForwarded
	// controlRefused: the edge should keep it from the backend.
	controlRefused
)

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
// client saw (a status, "RST CODE", "GOAWAY CODE", "closed"...).
func (t *tally) add(r role, name string, got []recorded, out string, judge func(recorded) (bad bool, detail string)) {
	note, clean := t.note(r != attack, got, out, judge)
	t.notes = append(t.notes, name+": "+note)
	switch {
	case r == attack:
		t.cases++
	case (r == controlForwarded) != clean, r == controlRefused && len(got) > 0:
		t.controlsFailed = append(t.controlsFailed, name)
	}
}

// note counts a case (unless it is a control) and describes it; clean:
// the backend got it, without a defect.
func (t *tally) note(control bool, got []recorded, out string, judge func(recorded) (bool, string)) (note string, clean bool) {
	if len(got) == 0 {
		switch code, err := strconv.Atoi(out); {
		case control:
		case err == nil && code < 400:
			t.answered.add(out)
		default:
			t.refused.add(out)
		}
		return out, false
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
	return strings.Join(details, ", ") + " → " + out, !anyBad
}

// report is the row's result, "<badLabel>: B of N; refused: R (how ×k,
// ...); answered by the edge: A (...); <cleanLabel>: C", after "control
// failed (names): " if one did, and its notes, every case's detail.
func (t *tally) report(badLabel, cleanLabel string) (result, notes string) {
	if len(t.controlsFailed) > 0 {
		result = "control failed (" + strings.Join(t.controlsFailed, ", ") + "): "
	}
	result += fmt.Sprintf("%s: %d of %d; refused: %s; answered by the edge: %s; %s: %d",
		badLabel, t.bad, t.cases, &t.refused, &t.answered, cleanLabel, t.clean)
	return result, strings.Join(t.notes, "; ")
}
