package report

import (
	"math"
	"strings"
	"testing"
)

func TestStability(t *testing.T) {
	r := &Report{Micro: []Micro{{Area: "JSON", Rows: []MicroRow{
		{Case: "twitter", Impl: "simdedge", Basis: "cpu-ns/op", TimeCI: 0.02},
		{Case: "twitter", Impl: "encoding_json", Basis: "cpu-ns/op", TimeCI: 0.12},
		{Case: "canada", Impl: "simdedge", Basis: "cpu-ns/op", TimeCI: 0.05},
		{Case: "canada", Impl: "encoding_json", Basis: "cpu-ns/op", TimeCI: math.NaN()},
	}}}}
	got := r.Stability()
	for _, want := range []string{
		"2 of 3 medians", "±5 %", "median interval is ±5.0 %",
		"Widest: JSON/twitter/encoding_json (cpu-ns/op) ±12.0 %.",
		"1 rows had too few rounds",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Stability() lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "canada/simdedge") {
		t.Errorf("a row at the threshold is listed as wide:\n%s", got)
	}
	empty := (&Report{Micro: []Micro{{Area: "A", Rows: []MicroRow{{TimeCI: math.NaN()}}}}}).Stability()
	if !strings.Contains(empty, "Too few rounds") {
		t.Errorf("no intervals: %s", empty)
	}
}
