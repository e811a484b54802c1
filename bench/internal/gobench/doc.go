// Package gobench parses the text that `go test -bench` prints (the format
// benchstat reads, golang.org/design/14313-benchmark-format) into results
// with their metrics, and splits benchmark names of the form
// Benchmark<Area>/<case...>/<impl> into the parts the report groups by.
package gobench
