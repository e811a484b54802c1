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
