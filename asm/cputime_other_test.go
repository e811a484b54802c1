//go:build !linux

package asm

import "testing"

// reportCPU runs loop; CPU time per op is only reported on Linux.
func reportCPU(_ *testing.B, loop func()) { loop() }
