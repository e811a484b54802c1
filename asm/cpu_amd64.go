//go:build !purego && !noasm

package asm

import "github.com/klauspost/cpuid/v2"

// detectLevel asks cpuid once. cpuid already clears the AVX and AVX-512
// flags when the OS does not save the wider registers (XCR0), so a flag
// here means the instructions are usable.
func detectLevel() Level {
	switch {
	case cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.BMI2):
		return AVX512
	case cpuid.CPU.Supports(cpuid.AVX2, cpuid.BMI2):
		return AVX2
	}
	return Generic
}
