package json

import (
	stdjson "encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// edgeCases are JSONTestSuite-style cases written for this package (names
// follow the suite: y_ must be accepted, n_ rejected, i_ is the RFC's
// implementation-defined ground where the package's choice is given and the
// reason written). divergent marks cases where encoding/json decides
// otherwise, on purpose.
var edgeCases = []struct {
	name      string
	in        string
	ok        bool
	err       error // expected sentinel for rejected inputs (nil: any)
	divergent bool
}{
	{"y_empty_array", `[]`, true, nil, false},
	{"y_empty_object", ` { } `, true, nil, false},
	{"y_scalar_number", `42`, true, nil, false},
	{"y_scalar_string", `"x"`, true, nil, false},
	{"y_scalar_true", ` true `, true, nil, false},
	{"y_scalar_null", `null`, true, nil, false},
	{"y_nested", `{"a":[1,{"b":[true,false,null]},"c\"d"],"e":{}}`, true, nil, false},
	{"y_escapes", `["\"\\\/\b\f\n\r\t\u0000\u00e9\ud83d\ude00"]`, true, nil, false},
	{"y_utf8", `["héllo 世界 😀"]`, true, nil, false},
	{"y_del_in_string", "[\"\x7f\"]", true, nil, false},
	{"y_huge_exponent", `[1e400]`, true, nil, false},
	{"y_tiny_exponent", `[1e-400]`, true, nil, false},
	{"y_huge_integer", `[123456789012345678901234567890]`, true, nil, false},
	{"y_int64_min", `[-9223372036854775808]`, true, nil, false},
	{"y_uint64_max", `[18446744073709551615]`, true, nil, false},
	{"y_minus_zero", `[-0, -0.0, 0e0, 0E+1, 0.5e-3]`, true, nil, false},
	{"y_duplicate_keys", `{"a":1,"a":2}`, true, nil, false},
	{"y_whitespace", " \t\r\n[ 1 , 2 ]\n", true, nil, false},
	{"y_escaped_key", `{"\u0061b":1}`, true, nil, false},
	{"n_empty", ``, false, ErrEmpty, false},
	{"n_only_space", "  \n", false, ErrEmpty, false},
	{"n_trailing_comma_array", `[1,]`, false, ErrUnexpectedByte, false},
	{"n_trailing_comma_object", `{"a":1,}`, false, ErrExpectedKey, false},
	{"n_missing_comma", `[1 2]`, false, ErrExpectedComma, false},
	{"n_missing_colon", `{"a" 1}`, false, ErrExpectedColon, false},
	{"n_unquoted_key", `{a:1}`, false, ErrExpectedKey, false},
	{"n_single_quote", `['a']`, false, ErrUnexpectedByte, false},
	{"n_nan", `[NaN]`, false, ErrUnexpectedByte, false},
	{"n_infinity", `[-Infinity]`, false, ErrInvalidNumber, false},
	{"n_leading_zero", `[01]`, false, ErrExpectedComma, false},
	{"n_leading_zero_neg", `[-012]`, false, ErrExpectedComma, false},
	{"n_plus", `[+1]`, false, ErrUnexpectedByte, false},
	{"n_dot_start", `[.5]`, false, ErrUnexpectedByte, false},
	{"n_dot_end", `[1.]`, false, ErrInvalidNumber, false},
	{"n_exp_empty", `[1e]`, false, ErrInvalidNumber, false},
	{"n_exp_sign_only", `[1e+]`, false, ErrInvalidNumber, false},
	{"n_minus_only", `[-]`, false, ErrInvalidNumber, false},
	{"n_hex", `[0x1]`, false, ErrExpectedComma, false},
	{"n_control_in_string", "[\"a\x01b\"]", false, ErrControlChar, false},
	{"n_tab_in_string", "[\"a\tb\"]", false, ErrControlChar, false},
	{"n_newline_in_string", "[\"a\nb\"]", false, ErrControlChar, false},
	{"n_bad_escape", `["\x"]`, false, ErrInvalidEscape, false},
	{"n_bad_unicode_escape", `["\u12G4"]`, false, ErrInvalidEscape, false},
	{"n_short_unicode_escape", `["\u12"]`, false, ErrInvalidEscape, false},
	{"n_unclosed_string", `["abc`, false, ErrUnexpectedEOF, false},
	{"n_unclosed_array", `[1,2`, false, ErrUnexpectedEOF, false},
	{"n_unclosed_object", `{"a":1`, false, ErrUnexpectedEOF, false},
	{"n_extra_close", `[1]]`, false, ErrTrailingData, false},
	{"n_two_values", `[1] [2]`, false, ErrTrailingData, false},
	{"n_garbage_after", `{} x`, false, ErrTrailingData, false},
	{"n_literal_typo", `[tru]`, false, ErrInvalidLiteral, false},
	{"n_literal_suffix", `[truex]`, false, ErrExpectedComma, false},
	{"n_capital_literal", `[True]`, false, ErrUnexpectedByte, false},
	{"n_comment", `[1 /* c */]`, false, ErrExpectedComma, false},
	{"n_bare_comma", `[,1]`, false, ErrUnexpectedByte, false},
	{"n_mismatched", `[1}`, false, ErrExpectedComma, false},
	{"n_nul_outside", "[1]\x00", false, ErrTrailingData, false},
	{"n_non_json_space", "[1,\u00a02]", false, ErrUnexpectedByte, false},
	{"n_form_feed_space", "[1,\f2]", false, ErrUnexpectedByte, false},
	// RFC 8259 section 8.1: parsers MAY ignore a BOM. encoding/json rejects
	// it and so does this package: an edge must not accept what its
	// backends may refuse.
	{"n_bom", "\xef\xbb\xbf[1]", false, ErrUnexpectedByte, false},
	// Section 8.1 requires UTF-8; encoding/json accepts invalid bytes and
	// replaces them with U+FFFD, this package rejects them (Options can allow).
	{"i_invalid_utf8", "[\"\xff\"]", false, ErrInvalidUTF8, true},
	{"i_overlong_utf8", "[\"\xc0\xaf\"]", false, ErrInvalidUTF8, true},
	{"i_truncated_utf8", "[\"\xe4\xb8\"]", false, ErrInvalidUTF8, true},
	{"i_utf16_surrogate_utf8", "[\"\xed\xa0\x80\"]", false, ErrInvalidUTF8, true},
	// Section 8.2: unpaired surrogates are unpredictable; rejected here
	// (simdjson-go rejects some and silently mis-decodes others).
	{"i_lone_high_surrogate", `["\ud800"]`, false, ErrLoneSurrogate, true},
	{"i_lone_low_surrogate", `["\udc00"]`, false, ErrLoneSurrogate, true},
	{"i_high_then_ascii_escape", `["\ud800\u0041"]`, false, ErrLoneSurrogate, true},
	{"i_high_then_text", `["\ud800abc"]`, false, ErrLoneSurrogate, true},
	{"i_two_high", `["\ud800\ud800"]`, false, ErrLoneSurrogate, true},
	// Depth: the limit (Options.MaxDepth, default 512) applies to both engines.
	{"n_too_deep", strings.Repeat("[", DefaultMaxDepth+1) + strings.Repeat("]", DefaultMaxDepth+1), false, ErrDepth, true},
	{"y_max_depth", strings.Repeat("[", DefaultMaxDepth) + strings.Repeat("]", DefaultMaxDepth), true, nil, false},
	{"n_deep_object", strings.Repeat(`{"a":`, DefaultMaxDepth+1) + "1" + strings.Repeat("}", DefaultMaxDepth+1), false, ErrDepth, true},
}

func TestEdgeCases(t *testing.T) {
	for _, tc := range edgeCases {
		t.Run(tc.name, func(t *testing.T) {
			in := []byte(tc.in)
			stdOK := stdjson.Valid(in)
			if (stdOK == tc.ok) == tc.divergent {
				t.Errorf("encoding/json Valid = %v, case says ok=%v divergent=%v", stdOK, tc.ok, tc.divergent)
			}
			var want any
			if tc.ok {
				var ok bool
				if want, ok = stdAnyNumber(in); !ok {
					t.Fatalf("encoding/json cannot decode an accepted case")
				}
			}
			for _, p := range engineParsers(Options{}) {
				doc, err := p.Parse(in)
				if (err == nil) != tc.ok {
					t.Fatalf("%v: err = %v, want ok=%v", p.Engine(), err, tc.ok)
				}
				if err != nil {
					var e *Error
					if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(in) {
						t.Fatalf("%v: error %v lacks a valid offset", p.Engine(), err)
					}
					if tc.err != nil && !errors.Is(err, tc.err) {
						t.Errorf("%v: err = %v, want %v", p.Engine(), err, tc.err)
					}
					if len(tc.in) > 0 && strings.Contains(err.Error(), tc.in) {
						t.Errorf("error echoes the input")
					}
					continue
				}
				if got := toAny(t, doc.Root()); !reflect.DeepEqual(got, want) {
					t.Errorf("%v: got %#v, want %#v", p.Engine(), got, want)
				}
				if err := p.Validate(in); err != nil {
					t.Errorf("%v: Validate: %v", p.Engine(), err)
				}
			}
		})
	}
}

// TestSharedCorpora compares both engines with encoding/json on every file
// in ../shared/data/json: the whole value tree, every value type.
func TestSharedCorpora(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "data", "json")
	if d := os.Getenv("SIMDEDGE_DATA"); d != "" {
		dir = filepath.Join(d, "json")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) == 0 {
		t.Skipf("no corpora in %s", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := stdAnyNumber(in)
			if !ok {
				t.Fatal("encoding/json rejects the corpus")
			}
			for _, p := range engineParsers(Options{}) {
				doc, err := p.Parse(in)
				if err != nil {
					t.Fatalf("%v: %v", p.Engine(), err)
				}
				if got := toAny(t, doc.Root()); !reflect.DeepEqual(got, want) {
					t.Fatalf("%v: document differs from encoding/json", p.Engine())
				}
			}
		})
	}
}

// TestNonJSONWhitespace covers bytes that bytes.TrimSpace (used inside
// simdjson-go) strips but RFC 8259 section 2 does not allow.
func TestNonJSONWhitespace(t *testing.T) {
	for _, in := range []string{"\f[]", "[]\f", "\v{}", "{}\v", "\u0085[1]", "[1]\u00a0", " \f [] "} {
		for _, p := range engineParsers(Options{}) {
			if _, err := p.Parse([]byte(in)); err == nil {
				t.Errorf("%v: %q accepted", p.Engine(), in)
			}
			if _, err := p.ParseND([]byte(in)); err == nil {
				t.Errorf("%v: ND %q accepted", p.Engine(), in)
			}
		}
	}
}

// TestSIMDEngineBugs holds inputs simdjson-go accepts against RFC 8259
// (found by the fuzzers); the simd engine must detect them and defer to the
// pure-Go engine's verdict.
func TestSIMDEngineBugs(t *testing.T) {
	for _, in := range []string{"[true\x00]", "[null\x00]", "[false\x00,1]", "[-01.5]", "[-00.5]", "[-01e5]",
		"[-00000000000000000000]", `["\u000 "]`, `["\u 000"]`, `["\ud800\u0041"]`, "[\"\xff\"]", "\f[]",
		// A \u escape after escaped backslashes (the simd engine's check
		// searches for "\u" and counts the backslashes before it).
		`["\\\ud800"]`, `["\\\\\u00g0"]`, `["\\", "\udc00"]`, `["\/\ud800\\"]`} {
		for _, p := range engineParsers(Options{}) {
			if _, err := p.Parse([]byte(in)); err == nil {
				t.Errorf("%v: %q accepted", p.Engine(), in)
			}
		}
	}
	for _, in := range []string{`["2014-08-31", "a, -01"]`, `[-0.5, -0, 0.0]`,
		`["\\ud800"]`, `["\\\\u00g0", "\\u"]`, `["\\\ud83d\ude00\\"]`, `["\u005c\u0075"]`} {
		for _, p := range engineParsers(Options{}) {
			if _, err := p.Parse([]byte(in)); err != nil {
				t.Errorf("%v: %q rejected: %v", p.Engine(), in, err)
			}
		}
	}
}

// TestValidateAgrees checks Validate against Parse on every edge case (the
// fuzzers check it on arbitrary input).
func TestValidateAgrees(t *testing.T) {
	for _, p := range engineParsers(Options{}) { // with and without marks
		for _, tc := range edgeCases {
			_, perr := p.Parse([]byte(tc.in))
			verr := p.Validate([]byte(tc.in))
			if (perr == nil) != (verr == nil) {
				t.Errorf("%s: Parse %v, Validate %v", tc.name, perr, verr)
				continue
			}
			if perr != nil {
				pe, ve := perr.(*Error), verr.(*Error)
				if pe.Offset != ve.Offset || pe.Err != ve.Err {
					t.Errorf("%s: Parse %v, Validate %v", tc.name, perr, verr)
				}
			}
		}
	}
}
