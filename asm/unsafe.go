package asm

import "unsafe"

// stringBytes views s as a byte slice without copying. Kernels only read
// through it; nothing may write to the result.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
