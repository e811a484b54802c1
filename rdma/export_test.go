//go:build rdma && cgo

package rdma

// CgoNoop exposes cgoNoop to the external test package's benchmarks.
var CgoNoop = cgoNoop
