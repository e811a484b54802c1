//go:build !amd64 || purego || noasm

package json

// simdjson-go is not built here (its assembly is amd64-only, and the purego
// and noasm tags promise no assembly), so only the pure-Go engine exists.
const simdAvailable = false

const simdMinLen = 0

type simdState struct{}

func (d *Document) parseSIMD(b []byte, nd bool) bool { return false }
