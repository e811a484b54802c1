package json

// Engine selects the JSON engine.
type Engine uint8

const (
	// EngineAuto uses the engine chosen at start-up (see DefaultEngine).
	EngineAuto Engine = iota
	// EnginePureGo is the tape parser written in Go; it runs everywhere.
	EnginePureGo
	// EngineSIMD is github.com/minio/simdjson-go (amd64 with AVX2 and CLMUL,
	// not under the purego or noasm build tags).
	EngineSIMD
)

func (e Engine) String() string {
	switch e {
	case EngineAuto:
		return "auto"
	case EnginePureGo:
		return "purego"
	case EngineSIMD:
		return "simd"
	}
	return "unknown"
}

// Limits with safe defaults. The depth limit bounds the parser's stack and
// any recursive consumer of a document; 512 is far above real request bodies
// (twitter.json nests 11 deep) and far below what would exhaust memory.
const (
	DefaultMaxDepth = 512
	// DefaultMaxSize bounds the input length. Tape payloads hold offsets in
	// 54 bits, so the hard limit is much higher; 1 GiB is a safe default for
	// a request body held in memory.
	DefaultMaxSize = 1 << 30
)

// Options configure a Parser. The zero value means "defaults".
type Options struct {
	// MaxDepth is the maximum nesting of arrays and objects (0: DefaultMaxDepth).
	MaxDepth int
	// MaxSize is the maximum input length in bytes (0: DefaultMaxSize).
	MaxSize int
	// AllowInvalidUTF8 accepts strings that are not valid UTF-8. RFC 8259
	// section 8.1 requires UTF-8 for exchanged JSON, so the default rejects it;
	// lone surrogates in \u escapes are always rejected (section 8.2 leaves
	// them unpredictable, and an edge must not let two readers disagree).
	AllowInvalidUTF8 bool
	// Engine forces an engine (EngineAuto: DefaultEngine()). Forcing
	// EngineSIMD where it is unavailable falls back to EnginePureGo.
	Engine Engine
	// Eager makes Parse convert every number and unescape every string
	// with escapes before it returns (eager.go), as C++ simdjson's DOM
	// parse does, instead of on each Int, Float or AppendString call:
	// for callers that read most of a document's values. Results are the
	// same either way. Pure-Go engine only (the simd engine converts
	// anyway).
	Eager bool
}

func (o Options) withDefaults() Options {
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.Engine == EngineAuto || (o.Engine == EngineSIMD && !simdAvailable) {
		o.Engine = defaultEngine
	}
	return o
}

// defaultEngine is the engine Options.Engine == EngineAuto selects: the pure-Go
// engine, which measured faster than simdjson-go on every corpus (see the
// measurement in engine_simd.go). SetEngine changes it for tests.
var defaultEngine = EnginePureGo

// DefaultEngine reports the engine chosen at start-up.
func DefaultEngine() Engine { return defaultEngine }

// Engines lists the engines usable on this machine and build, for tests and
// benchmarks that must exercise each.
func Engines() []Engine {
	if simdAvailable {
		return []Engine{EnginePureGo, EngineSIMD}
	}
	return []Engine{EnginePureGo}
}

// SetEngine changes the engine that parsers created afterwards with
// EngineAuto use, and returns the previous one; the hook tests and
// benchmarks use to force each engine, in the style of asm.SetLevel.
// EngineSIMD where it is unavailable selects EnginePureGo. Not safe to call
// concurrently with NewParser.
func SetEngine(e Engine) (prev Engine) {
	prev = defaultEngine
	switch {
	case e == EngineAuto:
	case e == EngineSIMD && !simdAvailable:
		defaultEngine = EnginePureGo
	default:
		defaultEngine = e
	}
	return prev
}
