//go:build !simdedgedebug

package server

// poison is a no-op in normal builds; see poison_debug.go.
func poison([]byte) {}

// Poisoning reports whether released buffers are poisoned (simdedgedebug).
const Poisoning = false
