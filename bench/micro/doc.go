// Package micro holds the micro benchmarks, named
// Benchmark<Area>/<corpus>/<impl>, that put simdedge's parsers and kernels
// beside their peers in one run.
package micro
