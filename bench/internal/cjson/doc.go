// Package cjson puts simdjson (the C++ library, Debian's libsimdjson-dev)
// beside parse/json in the micro benchmarks, through cgo. It exists only in
// the bench module: cgo never enters the main module's build.
//
// The binding is built only with the simdjson build tag (and cgo), so the
// bench module still builds where the library is missing:
//
//	cd bench && go test -tags simdjson -bench 'JSON' ./micro/
//
// Without the tag, Available reports false and Reason says why; benchmarks
// skip the peer, and fail instead when REQUIRE_SIMDJSON=1 (set by .ci/run,
// whose machine installs the library).
//
// A Parser parses with simdjson::dom::parser, the DOM parse that simdjson's
// own benchmarks time: stage 1 (the structural index) and stage 2 (the
// tape, with numbers converted and strings unescaped into its string
// buffer). The input is held in a buffer padded as simdjson requires, so a
// parse copies nothing.
package cjson

import (
	"errors"
	"os"
)

// ErrParse is returned when simdjson rejects a document.
var ErrParse = errors.New("cjson: simdjson rejected the document")

// Required reports whether the environment demands the peer
// (REQUIRE_SIMDJSON=1): a benchmark that would skip fails instead.
func Required() bool { return os.Getenv("REQUIRE_SIMDJSON") == "1" }
