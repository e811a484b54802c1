package stats

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		in               []float64
		n                int
		median, min, max float64
		spread           float64
	}{
		{[]float64{3}, 1, 3, 3, 3, 0},
		{[]float64{5, 1, 3}, 3, 3, 1, 5, 2.0 / 3},
		{[]float64{4, 1, 3, 2}, 4, 2.5, 1, 4, 0.6},
		{[]float64{2, math.NaN(), 2}, 2, 2, 2, 2, 0},
	}
	for _, tt := range tests {
		s := Summarize(tt.in)
		if s.N != tt.n || s.Median != tt.median || s.Min != tt.min || s.Max != tt.max {
			t.Errorf("Summarize(%v) = %+v", tt.in, s)
		}
		if got := s.Spread(); math.Abs(got-tt.spread) > 1e-12 {
			t.Errorf("Summarize(%v).Spread() = %v, want %v", tt.in, got, tt.spread)
		}
	}
}

func TestSummarizeEmpty(t *testing.T) {
	s := Summarize(nil)
	if s.N != 0 || !math.IsNaN(s.Median) || !math.IsNaN(s.Spread()) {
		t.Errorf("Summarize(nil) = %+v", s)
	}
}

func TestSummarizeDoesNotReorderInput(t *testing.T) {
	in := []float64{3, 1, 2}
	Summarize(in)
	if in[0] != 3 || in[1] != 1 || in[2] != 2 {
		t.Errorf("input reordered: %v", in)
	}
}

func TestRatio(t *testing.T) {
	if r := Ratio(6, 3); r != 2 {
		t.Errorf("Ratio(6, 3) = %v", r)
	}
	for _, r := range []float64{Ratio(1, 0), Ratio(math.NaN(), 1), Ratio(1, math.NaN())} {
		if !math.IsNaN(r) {
			t.Errorf("undefined ratio = %v, want NaN", r)
		}
	}
}
