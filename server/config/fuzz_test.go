package config

import (
	"errors"
	"testing"
)

// FuzzParse: Parse never panics; a configuration it accepts prints its
// effective form; and the errors of one it refuses
// are *Error values at a line of the input, printable on one line each,
// none of them at or inside the key of an earlier one (one error per
// value: errors.go).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		issueExample,
		okRoute,
		"upstreams:\n  - name: app\n    targets: [\"127.0.0.1:9001\", {address: \"127.0.0.1:9002\", weight: 3}]\n    balance: round_robbin\n" + okRoute,
		"routes:\n  - match: {path_prefix: /}\n    rate_limit: {rate: five}\n    respond: {status: 200}\n",
		"listen: \"127.0.0.1:8080\"\nroutes:\n  - match: {path_prefix: /}\n    respond:\n      status: 200\n     body: x\n",
		"listeners:\n  - {address: \"127.0.0.1:0\", engine: goroutine}\nadmin: {address: \"127.0.0.1:0\"}\n" + okRoute,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Parse(b)
		if err == nil {
			// The effective form is not parsed again: with only goroutine
			// listeners it says proxy_on_loop: true, which Parse refuses
			// (left to its owner; see the report of issue 29's errors).
			if _, err := c.WithDefaults().YAML(); err != nil {
				t.Fatalf("accepted, but its effective form does not print: %v", err)
			}
			return
		}
		errs := []error{err}
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		lines := len(lineEnds(b)) + 1 // a last line break starts an empty line
		for i, e := range errs {
			var ce *Error
			if !errors.As(e, &ce) {
				t.Fatalf("error %q is no *Error", e)
			}
			if ce.Line < 0 || ce.Line > lines {
				t.Errorf("%v: line outside the input's %d", e, lines)
			}
			for _, r := range e.Error() {
				if r < ' ' || r == 0x7f {
					t.Fatalf("error %q has a control character", e)
				}
			}
			for _, prev := range errs[:i] {
				var pe *Error
				if errors.As(prev, &pe) && within(ce.Key, pe.Key) {
					t.Errorf("%v follows %v", e, prev)
				}
			}
		}
	})
}
