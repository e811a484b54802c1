// Package stats summarises repeated measurements of one quantity by their
// median and min–max spread. Medians, not means, because the benchmark
// machines are shared: one round disturbed by another process moves a mean
// but not a median.
package stats
