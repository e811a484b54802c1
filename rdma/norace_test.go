//go:build rdma && cgo && !race

package rdma_test

const raceEnabled = false
