//go:build simdjson && cgo

package cjson

/*
#cgo CXXFLAGS: -O3 -std=c++17
#cgo LDFLAGS: -lsimdjson
#include <stdint.h>
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"
)

var errUnknownImpl = errors.New("cjson: simdjson implementation not available on this cpu")

// Available reports whether the binding is built in.
func Available() bool { return true }

// Reason says why Available is false ("" when it is true).
func Reason() string { return "" }

// Version is the simdjson version the binding was compiled against.
func Version() string { return C.GoString(C.cjson_version()) }

// Implementations lists the simdjson kernels this CPU runs (e.g. "icelake",
// "haswell", "westmere", "fallback").
func Implementations() []string {
	var out []string
	for i := 0; ; i++ {
		s := C.cjson_implementation(C.int(i))
		if s == nil {
			return out
		}
		out = append(out, C.GoString(s))
	}
}

// Parser is a simdjson dom::parser with one loaded document.
type Parser struct {
	p   unsafe.Pointer
	buf []byte // the document, followed by simdjson's padding
	pin runtime.Pinner
}

// New returns a parser for data that runs simdjson's implementation impl
// (one of Implementations; "" keeps simdjson's choice for this CPU).
func New(data []byte, impl string) (*Parser, error) {
	cs := C.CString(impl)
	defer C.free(unsafe.Pointer(cs))
	h := C.cjson_new(cs, C.size_t(len(data)))
	if h == nil {
		return nil, errUnknownImpl
	}
	p := &Parser{p: h}
	// simdjson reads up to SIMDJSON_PADDING bytes past the end (the
	// contract of padded_string); the padding is zero.
	p.buf = make([]byte, len(data)+int(C.cjson_padding()))
	copy(p.buf, data)
	p.pin.Pin(&p.buf[0])
	return p, nil
}

// Implementation names the simdjson kernel p runs.
func (p *Parser) Implementation() string { return C.GoString(C.cjson_active(p.p)) }

// Parse parses the loaded document and returns the number of tape
// elements of its root (so the work is observable).
func (p *Parser) Parse() (int, error) {
	n := C.cjson_parse(p.p, (*C.uint8_t)(unsafe.Pointer(&p.buf[0])), C.size_t(len(p.buf)-int(C.cjson_padding())))
	if n < 0 {
		return 0, ErrParse
	}
	return int(n), nil
}

// Stage1 runs simdjson's first stage alone on the loaded document (UTF-8
// check and structural index) and returns the number of structurals.
func (p *Parser) Stage1() (int, error) {
	n := C.cjson_stage1(p.p, (*C.uint8_t)(unsafe.Pointer(&p.buf[0])), C.size_t(len(p.buf)-int(C.cjson_padding())))
	if n < 0 {
		return 0, ErrParse
	}
	return int(n), nil
}

// Stage2 runs simdjson's second stage (tape, numbers converted, strings
// unescaped) over the index of the last Stage1; it may repeat.
func (p *Parser) Stage2() (int, error) {
	if n := C.cjson_stage2(p.p); n >= 0 {
		return int(n), nil
	}
	return 0, ErrParse
}

// Close frees the parser.
func (p *Parser) Close() {
	if p.p != nil {
		C.cjson_free(p.p)
		p.p = nil
		p.pin.Unpin()
	}
}
