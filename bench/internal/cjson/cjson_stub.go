//go:build !simdjson || !cgo

package cjson

import "errors"

var errUnavailable = errors.New("cjson: simdjson peer not built")

// Available reports whether the binding is built in.
func Available() bool { return false }

// Reason says why Available is false.
func Reason() string {
	return "simdjson peer not built: install libsimdjson-dev and run go test -tags simdjson (with cgo)"
}

// Version is empty without the binding.
func Version() string { return "" }

// Implementations is empty without the binding.
func Implementations() []string { return nil }

// Parser is unusable without the binding.
type Parser struct{}

// New fails without the binding.
func New(data []byte, impl string) (*Parser, error) { return nil, errUnavailable }

// Implementation is empty without the binding.
func (p *Parser) Implementation() string { return "" }

// Parse fails without the binding.
func (p *Parser) Parse() (int, error) { return 0, errUnavailable }

// Stage1 fails without the binding.
func (p *Parser) Stage1() (int, error) { return 0, errUnavailable }

// Stage2 fails without the binding.
func (p *Parser) Stage2() (int, error) { return 0, errUnavailable }

// Close does nothing without the binding.
func (p *Parser) Close() {}
