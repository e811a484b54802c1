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

func TestMedianCI(t *testing.T) {
	seq := func(n int) []float64 {
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(n - i) // reversed: MedianCI must sort
		}
		return s
	}
	tests := []struct {
		n      int
		lo, hi float64
		ok     bool
	}{
		// Coverage of [s(k), s(n-k+1)] is 1 - 2·P(Binomial(n, 1/2) < k).
		{5, 0, 0, false}, // k=1 covers 1 - 2/32 = 0.9375 < 0.95
		{6, 1, 6, true},  // k=1 covers 1 - 2/64 = 0.969
		{8, 1, 8, true},  // k=2 would cover 1 - 18/256 = 0.930
		{10, 2, 9, true}, // k=2 covers 1 - 22/1024 = 0.979; k=3 0.891
		{20, 6, 15, true},
	}
	for _, tt := range tests {
		lo, hi, ok := MedianCI(seq(tt.n), 0.95)
		if ok != tt.ok || (ok && (lo != tt.lo || hi != tt.hi)) {
			t.Errorf("MedianCI(1..%d) = %v, %v, %v; want %v, %v, %v", tt.n, lo, hi, ok, tt.lo, tt.hi, tt.ok)
		}
	}
	if _, _, ok := MedianCI([]float64{1, 2, 3, 4, 5, math.NaN()}, 0.95); ok {
		t.Error("a NaN sample counted towards the six needed")
	}
	s := []float64{100, 102, 98, 101, 99, 100, 103, 97, 100, 100}
	if got := CISpread(s); math.Abs(got-0.02) > 1e-12 {
		t.Errorf("CISpread = %v, want 0.02 (interval 98..102 around 100)", got)
	}
	if got := CISpread(s[:4]); !math.IsNaN(got) {
		t.Errorf("CISpread of 4 samples = %v, want NaN", got)
	}
}

func TestPaired(t *testing.T) {
	got := Paired([]float64{10, 20, 30}, []float64{5, 10, 0})
	if len(got) != 3 || got[0] != 2 || got[1] != 2 || !math.IsNaN(got[2]) {
		t.Errorf("Paired = %v, want [2 2 NaN]", got)
	}
	if Paired([]float64{1, 2}, []float64{1}) != nil {
		t.Error("Paired of unequal rounds is not nil")
	}
}
