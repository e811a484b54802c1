// Package json gives fast, allocation-light access to request bodies in JSON
// and FlatBuffers.
//
// # JSON
//
// One API over two engines: the package's own pure-Go engine, a single pass
// that validates RFC 8259 and writes a tape of tokens, and, on amd64 CPUs
// with AVX2 and CLMUL, github.com/minio/simdjson-go. The pure-Go engine is
// the default everywhere because it measured faster on every corpus (see
// "Engines, measured"); Options.Engine = EngineSIMD selects simdjson-go where
// the CPU and build support it (never under the purego or noasm tags).
// Both engines write the same tape layout (simdjson's), so every accessor is
// shared and the wrapper costs nothing per value.
//
//	p := json.NewParser(json.Options{})   // one per goroutine, reused
//	doc, err := p.Parse(body)             // no allocation in steady state
//	id, err := doc.Root().Get("statuses", 0, "user", "id")
//	n, err := id.Int()
//
// Documents are views: strings (and, with the pure-Go engine, numbers) point
// into the input buffer, which must stay unchanged while the document is in
// use; the next Parse on the same Parser invalidates the previous document.
// Strings without escapes are returned without copying (Value.View); escaped
// ones are unescaped into a caller buffer (Value.AppendString). Numbers are
// converted and escaped strings unescaped when asked for, unless
// Options.Eager has Parse do it for the whole document (as C++ simdjson's
// DOM parse does), for callers that read most values.
//
// Both engines accept exactly RFC 8259 JSON texts, with these choices where
// the RFC leaves room: strings must be valid UTF-8 (section 8.1; optional),
// \u escapes must not be unpaired surrogates (section 8.2), a byte order mark
// is an error (section 8.1 allows either), nesting is limited by
// Options.MaxDepth, and numbers of any magnitude are accepted (section 9
// allows limits; Value.Float reports ErrRange when a number does not fit).
// Errors are *Error values with the byte offset, never the input bytes.
//
// # Engines, measured
//
// The simd engine runs simdjson-go, then checks what simdjson-go does not:
// UTF-8 (one asm.ValidUTF8 pass), \u escapes (it mis-decodes unpaired
// surrogates and accepts non-hex digits), a NUL after literals and negative
// numbers with leading zeros (both accepted by simdjson-go 0.4.5, found by
// this package's fuzzers; these three in one asm.Classify pass), whitespace
// beyond RFC 8259's four bytes, and the depth limit (simdjson-go has none).
// When any check fails, or simdjson-go rejects the input, the pure-Go engine
// re-parses and gives the verdict, so both engines accept and reject exactly
// the same inputs with the same error offsets.
//
// The pure-Go engine is a single pass over the input; where asm runs SIMD
// kernels it first classifies each 16 KiB window into bit masks of string
// stops and whitespace (asm.Classify) and checks UTF-8 once per document
// (asm.ValidUTF8), so its string and whitespace scans are bit scans. For a
// single JSON text it goes further, as simdjson does: a structural index
// (the offsets of every token, from the class masks, asm.BitPositions)
// feeds a second stage that checks each token where the index says it is;
// an input that is not valid falls back to the one pass, which gives the
// error and its offset. On the
// 2-core AVX-512 development machine (Go 1.26) it used less CPU per
// document than simdjson-go on every corpus, and than valyala/fastjson on
// twitter.json; see bench/micro (BenchmarkJSON) before choosing
// Options.Engine.
//
// NDJSON bodies are parsed with Parser.ParseND and walked with Document.Roots,
// or streamed from an io.Reader line by line with NDReader.
//
// # Related packages
//
// parse/json/envelope holds the FlatBuffers request envelope (the parsed
// request handed to backends without a re-parse, and bodies sent as
// application/x-flatbuffers); parse/json/body dispatches a body on its
// Content-Type (MediaOf here classifies it without allocating).
package json
