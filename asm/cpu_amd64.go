//go:build !purego && !noasm

package asm

import "github.com/klauspost/cpuid/v2"

// detectLevel asks cpuid once. cpuid already clears the AVX and AVX-512
// flags when the OS does not save the wider registers (XCR0), so a flag
// here means the instructions are usable.
func detectLevel() Level {
	switch {
	// BMI1, POPCNT and CLMUL (the JSONIndex kernels) come with every CPU that has AVX2 and BMI2; they are
	// checked all the same.
	case cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.BMI1, cpuid.BMI2, cpuid.POPCNT, cpuid.CLMUL):
		return AVX512
	case cpuid.CPU.Supports(cpuid.AVX2, cpuid.BMI1, cpuid.BMI2, cpuid.POPCNT, cpuid.CLMUL):
		return AVX2
	}
	return Generic
}

// detectVBMI2 reports whether the AVX-512 level may use AVX512_VBMI2
// (vpcompressb, the jsonIndexVBMI2 kernel).
func detectVBMI2() bool { return detectLevel() == AVX512 && cpuid.CPU.Supports(cpuid.AVX512VBMI2) }
