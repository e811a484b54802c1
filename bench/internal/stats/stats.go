package stats

import (
	"math"
	"slices"
)

// Summary is the median and range of a set of samples.
type Summary struct {
	N      int
	Median float64
	Min    float64
	Max    float64
}

// Summarize returns the summary of samples; NaN samples are ignored. With no
// samples the Median, Min and Max are NaN and N is 0.
func Summarize(samples []float64) Summary {
	s := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	if len(s) == 0 {
		nan := math.NaN()
		return Summary{Median: nan, Min: nan, Max: nan}
	}
	slices.Sort(s)
	return Summary{N: len(s), Median: median(s), Min: s[0], Max: s[len(s)-1]}
}

// median of sorted, non-empty s: the middle sample, or the mean of the two
// middle samples for an even count.
func median(s []float64) float64 {
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Spread is the half-width of the min–max range relative to the median, as a
// fraction (0.05 is ±5 %). It is 0 for a single sample and NaN when the
// median is 0 or undefined.
func (s Summary) Spread() float64 {
	if s.N == 0 || s.Median == 0 {
		return math.NaN()
	}
	return (s.Max - s.Min) / 2 / math.Abs(s.Median)
}

// Ratio is a/b, NaN when either is undefined or b is 0, so a missing peer
// shows as "n/a" rather than as infinity.
func Ratio(a, b float64) float64 {
	if math.IsNaN(a) || math.IsNaN(b) || b == 0 {
		return math.NaN()
	}
	return a / b
}

// MedianCI returns a distribution-free confidence interval for the median
// of samples at the given confidence (0.95 is what benchstat uses): the
// k-th smallest and k-th largest samples for the largest k whose interval
// still covers the true median with that probability under the binomial
// law of sample ranks. ok is false when there are too few samples for any
// such interval (fewer than 6 at 0.95). NaN samples are ignored.
func MedianCI(samples []float64, confidence float64) (lo, hi float64, ok bool) {
	s := make([]float64, 0, len(samples))
	for _, v := range samples {
		if !math.IsNaN(v) {
			s = append(s, v)
		}
	}
	n := len(s)
	if n == 0 {
		return math.NaN(), math.NaN(), false
	}
	slices.Sort(s)
	// tail accumulates P(X < k) for X ~ Binomial(n, 1/2); the interval
	// [s(k), s(n-k+1)] (1-based) misses the median with probability 2·tail.
	best := 0
	tail := 0.0
	term := math.Pow(0.5, float64(n)) // P(X = 0)
	for k := 1; k <= n/2; k++ {
		tail += term
		if 1-2*tail < confidence {
			break
		}
		best = k
		term *= float64(n-k+1) / float64(k) // P(X = k) from P(X = k-1)
	}
	if best == 0 {
		return math.NaN(), math.NaN(), false
	}
	return s[best-1], s[n-best], true
}

// CISpread is the half-width of the 95 % confidence interval of the median
// relative to the median, as a fraction: what benchstat prints as "± x%".
// It is NaN when the samples are too few for an interval.
func CISpread(samples []float64) float64 {
	lo, hi, ok := MedianCI(samples, 0.95)
	m := Summarize(samples).Median
	if !ok || m == 0 || math.IsNaN(m) {
		return math.NaN()
	}
	return (hi - lo) / 2 / math.Abs(m)
}

// Paired returns num[i]/den[i] for every round i. Rounds of the suite run
// the implementations back to back, so a disturbance of the shared machine
// tends to hit both sides of a pair; the per-round ratios are therefore a
// tighter picture of a comparison than the two sides' ranges. It returns
// nil when the two sides have different numbers of rounds (a side missed
// a round, so the pairing would be wrong).
func Paired(num, den []float64) []float64 {
	if len(num) != len(den) || len(num) == 0 {
		return nil
	}
	out := make([]float64, len(num))
	for i := range num {
		out[i] = Ratio(num[i], den[i])
	}
	return out
}
