//go:build rdma && cgo && race

package rdma_test

// raceEnabled: the race detector allocates on its own; allocation counts
// are checked without it.
const raceEnabled = true
