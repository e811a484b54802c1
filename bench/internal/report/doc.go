// Package report turns raw measurements into the benchmark report: it
// groups `go test -bench` results by area, case and implementation, takes
// medians and min–max spreads, computes ratios against the peer measured in
// the same run, and writes the Markdown report, its SVG plots and the
// benchstat-format lines for the load benchmarks.
//
// Ratios are always "how many times better than the peer": for time per
// operation and CPU per request it is peer/ours, for requests per second it
// is ours/peer, so a value above 1 means simdedge (or the row's
// implementation) wins.
package report
