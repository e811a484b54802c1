package trace

import (
	"math/rand/v2"
)

// W3C Trace Context (https://www.w3.org/TR/trace-context/) traceparent:
// version "-" trace-id "-" parent-id "-" trace-flags, lowercase hex.
const (
	// TraceparentLen is the length of a version-00 traceparent (§3.2.2).
	TraceparentLen = 55
	versionLen     = 2
	traceIDLen     = 32
	parentIDLen    = 16
	flagsLen       = 2
	traceIDOff     = versionLen + 1
	parentIDOff    = traceIDOff + traceIDLen + 1
	flagsOff       = parentIDOff + parentIDLen + 1
	// MaxTracestate bounds the tracestate forwarded: §3.3.1.5 lets a
	// vendor drop it beyond 512 characters rather than truncate entries.
	MaxTracestate = 512
)

// Parent is a parsed traceparent: what the edge keeps when it forwards.
type Parent struct {
	TraceID [traceIDLen]byte // lowercase hex
	Flags   [flagsLen]byte   // lowercase hex
}

// ParseTraceparent parses a traceparent value by §3.2 and §4.3 (version
// handling): version 00 is exactly 55 bytes; a higher version (not ff) may
// be longer if byte 55 is '-', and its first four fields are read as
// version 00's. All-zero trace and parent IDs are invalid; hex must be
// lowercase. ok is false for anything else: the caller drops the header
// and tracestate with it (§3.3: tracestate without a valid traceparent is
// meaningless).
func ParseTraceparent(v []byte) (p Parent, ok bool) {
	if len(v) < TraceparentLen {
		return p, false
	}
	if !lowerHex(v[:versionLen]) || v[0] == 'f' && v[1] == 'f' {
		return p, false
	}
	version00 := v[0] == '0' && v[1] == '0'
	if version00 && len(v) != TraceparentLen || !version00 && len(v) > TraceparentLen && v[TraceparentLen] != '-' {
		return p, false
	}
	if v[traceIDOff-1] != '-' || v[parentIDOff-1] != '-' || v[flagsOff-1] != '-' {
		return p, false
	}
	tid, pid, fl := v[traceIDOff:traceIDOff+traceIDLen], v[parentIDOff:parentIDOff+parentIDLen], v[flagsOff:flagsOff+flagsLen]
	if !lowerHex(tid) || !lowerHex(pid) || !lowerHex(fl) || allZero(tid) || allZero(pid) {
		return p, false
	}
	copy(p.TraceID[:], tid)
	copy(p.Flags[:], fl)
	return p, true
}

func lowerHex(b []byte) bool {
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != '0' {
			return false
		}
	}
	return true
}

// NewParent starts a trace: a random trace ID, flags 00 (not sampled: the
// edge records nothing, so it does not claim to have).
func NewParent() Parent {
	var p Parent
	appendHex64(p.TraceID[:0], nonZero())
	appendHex64(p.TraceID[16:16], rand.Uint64())
	p.Flags = [2]byte{'0', '0'}
	return p
}

// AppendTraceparent appends the version-00 traceparent the edge sends
// upstream: p's trace ID and flags with a new random span (parent) ID,
// the edge acting as a span of the trace.
func AppendTraceparent(b []byte, p *Parent) []byte {
	b = append(b, "00-"...)
	b = append(b, p.TraceID[:]...)
	b = append(b, '-')
	b = appendHex64(b, nonZero())
	b = append(b, '-')
	return append(b, p.Flags[:]...)
}

// nonZero is a random 64-bit value other than 0 (an all-zero ID is
// invalid). rand.Uint64 uses the runtime's per-thread generator: no lock.
func nonZero() uint64 {
	for {
		if v := rand.Uint64(); v != 0 {
			return v
		}
	}
}

const hexDigits = "0123456789abcdef"

// appendHex64 appends v as 16 lowercase hex digits.
func appendHex64(b []byte, v uint64) []byte { return appendHexN(b, v, 16) }
