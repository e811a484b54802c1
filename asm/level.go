package asm

// Level names an instruction-set level that kernels are compiled for.
type Level uint8

const (
	// Generic is the pure-Go twin of every kernel. It is always available.
	Generic Level = iota
	// AVX2 is x86-64 AVX2 (256-bit vectors).
	AVX2
	// AVX512 is x86-64 AVX-512 F+BW+VL (512-bit vectors and mask registers).
	AVX512
)

func (l Level) String() string {
	switch l {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case AVX512:
		return "avx512"
	}
	return "unknown"
}

// detected is the best level this CPU and build support; it never changes
// after init. active is the level kernels dispatch on, equal to detected
// unless a test lowered it with SetLevel.
var (
	detected = detectLevel()
	active   = detected
)

// Active reports the level kernels currently dispatch on.
func Active() Level { return active }

// Levels lists every level this CPU and build can run, lowest first. Tests
// and benchmarks iterate over it to exercise each path.
func Levels() []Level {
	ls := []Level{Generic}
	for l := Generic + 1; l <= detected; l++ {
		ls = append(ls, l)
	}
	return ls
}

// SetLevel makes kernels dispatch on l and returns the previous level, so a
// test can restore it. A level above what the CPU and build support is
// lowered to the best supported one. SetLevel is a test and benchmark hook:
// it must not race with running kernels.
func SetLevel(l Level) (prev Level) {
	prev = active
	active = min(l, detected)
	return prev
}
