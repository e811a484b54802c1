// Package fuzz holds cross-implementation fuzz harnesses: simdedge's
// parsers against independent implementations whose modules must not enter
// the main go.mod (nlnwa/whatwg-url) or whose comparison needs only public
// APIs (net/url). It is a module of its own, with a replace to the root.
//
// Properties that need a parser's internals stay in that package's own
// fuzz_test.go (for example parse/http's comparison with net/http's
// ReadRequest, which shares the package's test helpers); run.sh runs the
// targets of both modules.
//
// Every intended divergence is written next to the check that skips it,
// with the standard's section or the WPT case that decides who is right.
package fuzz
