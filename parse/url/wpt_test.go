package url

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// urlTest is one object of urltestdata.json.
type urlTest struct {
	Input    string  `json:"input"`
	Base     *string `json:"base"`
	Failure  bool    `json:"failure"`
	Href     string  `json:"href"`
	Origin   *string `json:"origin"`
	Protocol string  `json:"protocol"`
	Username string  `json:"username"`
	Password string  `json:"password"`
	Host     string  `json:"host"`
	Hostname string  `json:"hostname"`
	Port     string  `json:"port"`
	Pathname string  `json:"pathname"`
	Search   string  `json:"search"`
	Hash     string  `json:"hash"`
}

// loadJSONObjects reads a WPT-style JSON array and decodes its objects,
// skipping the comment strings between them.
func loadJSONObjects[T any](t testing.TB, name string) []T {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, m := range raw {
		if len(m) > 0 && m[0] == '"' {
			continue
		}
		var v T
		if err := json.Unmarshal(m, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// checkURLTest runs one urltestdata case and returns a description of the
// first mismatch, or "".
func checkURLTest(tc urlTest) string {
	var base *URL
	if tc.Base != nil {
		b, err := Parse(*tc.Base, nil)
		if err != nil {
			if tc.Failure {
				return ""
			}
			return "base failed to parse: " + err.Error()
		}
		base = b
	}
	u, err := Parse(tc.Input, base)
	if tc.Failure {
		if err == nil {
			return "parsed, want failure; href " + u.Href()
		}
		if CanParse(tc.Input, base) {
			return "CanParse true, want false"
		}
		return ""
	}
	if err != nil {
		return "failed: " + err.Error()
	}
	if !CanParse(tc.Input, base) {
		return "CanParse false"
	}
	if msg := u.checkInvariants(); msg != "" {
		return "invariant: " + msg
	}
	got := []string{u.Href(), u.Protocol(), u.Username(), u.Password(), u.Host(), u.Hostname(), u.Port(), u.Pathname(), u.Search(), u.Hash()}
	want := []string{tc.Href, tc.Protocol, tc.Username, tc.Password, tc.Host, tc.Hostname, tc.Port, tc.Pathname, tc.Search, tc.Hash}
	names := []string{"href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"}
	for i := range got {
		if got[i] != want[i] {
			return names[i] + " = " + quote(got[i]) + ", want " + quote(want[i])
		}
	}
	if tc.Origin != nil && u.Origin() != *tc.Origin {
		return "origin = " + quote(u.Origin()) + ", want " + quote(*tc.Origin)
	}
	return ""
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

func runURLTests(t *testing.T, file string) (pass, total int) {
	tests := loadJSONObjects[urlTest](t, file)
	for i, tc := range tests {
		total++
		if msg := checkURLTest(tc); msg != "" {
			base := "null"
			if tc.Base != nil {
				base = quote(*tc.Base)
			}
			t.Errorf("#%d input %s base %s: %s", i, quote(tc.Input), base, msg)
			continue
		}
		pass++
	}
	return pass, total
}

func TestWPTURLTestData(t *testing.T) {
	pass, total := runURLTests(t, "wpt/urltestdata.json")
	t.Logf("urltestdata.json: %d/%d pass", pass, total)
}

// TestWPTURLTestDataJavaScriptOnly runs the cases WPT keeps apart because
// they need lone surrogates; Go's JSON decoder turns those into U+FFFD,
// which is the USVString conversion a browser applies first.
func TestWPTURLTestDataJavaScriptOnly(t *testing.T) {
	pass, total := runURLTests(t, "wpt/urltestdata-javascript-only.json")
	t.Logf("urltestdata-javascript-only.json: %d/%d pass", pass, total)
}

func TestLocalURLTestData(t *testing.T) {
	pass, total := runURLTests(t, "local_urltestdata.json")
	t.Logf("local_urltestdata.json: %d/%d pass", pass, total)
}

// TestAdaExtraURLTestData runs the extra cases of the Ada project
// (testdata/ada_extra_urltestdata.json, MIT or Apache-2.0).
func TestAdaExtraURLTestData(t *testing.T) {
	pass, total := runURLTests(t, "ada_extra_urltestdata.json")
	t.Logf("ada_extra_urltestdata.json: %d/%d pass", pass, total)
}

func TestWPTToASCII(t *testing.T) {
	type tc struct {
		Input  string  `json:"input"`
		Output *string `json:"output"`
	}
	pass, total := 0, 0
	for _, c := range loadJSONObjects[tc](t, "wpt/toascii.json") {
		total++
		// toascii.window.js checks the host through a URL and the setters.
		u, err := Parse("https://"+c.Input+"/x", nil)
		if c.Output == nil {
			if err == nil {
				t.Errorf("%s: got host %s, want failure", quote(c.Input), quote(u.Host()))
				continue
			}
		} else {
			if err != nil {
				t.Errorf("%s: failed (%v), want %s", quote(c.Input), err, quote(*c.Output))
				continue
			}
			if u.Host() != *c.Output || u.Hostname() != *c.Output {
				t.Errorf("%s: host %s, want %s", quote(c.Input), quote(u.Host()), quote(*c.Output))
				continue
			}
		}
		// Setting host and hostname must give the same result (or leave
		// the URL unchanged on failure).
		for _, set := range []func(*URL, string) error{(*URL).SetHost, (*URL).SetHostname} {
			v, _ := Parse("https://x/x", nil)
			_ = set(v, c.Input)
			want := "x"
			if c.Output != nil {
				want = *c.Output
			}
			if v.Hostname() != want {
				t.Errorf("%s: setter gave hostname %s, want %s", quote(c.Input), quote(v.Hostname()), quote(want))
			}
		}
		pass++
	}
	t.Logf("toascii.json: %d/%d pass", pass, total)
}

func TestWPTPercentEncoding(t *testing.T) {
	type tc struct {
		Input  string            `json:"input"`
		Output map[string]string `json:"output"`
	}
	for _, c := range loadJSONObjects[tc](t, "wpt/percent-encoding.json") {
		want := c.Output["utf-8"]
		u, err := Parse("https://doesnotmatter.invalid/?"+c.Input+"#"+c.Input, nil)
		if err != nil {
			t.Errorf("%s: %v", quote(c.Input), err)
			continue
		}
		if u.Search() != "?"+want {
			t.Errorf("%s: search %s, want %s", quote(c.Input), quote(u.Search()), quote("?"+want))
		}
		if u.Hash() != "#"+want {
			t.Errorf("%s: hash %s, want %s", quote(c.Input), quote(u.Hash()), quote("#"+want))
		}
	}
}

// TestWPTIdnaTestV2 runs UTS #46's conformance data as WPT does: each
// input as the host of "https://<input>/x".
func TestWPTIdnaTestV2(t *testing.T) {
	type tc struct {
		Input  string  `json:"input"`
		Output *string `json:"output"`
	}
	pass, total := 0, 0
	for _, c := range loadJSONObjects[tc](t, "wpt/IdnaTestV2.json") {
		if c.Input == "" {
			// As in WPT's IdnaTestV2.window.js: an empty host cannot be
			// tested through a URL ("https:///x" has host "x").
			continue
		}
		total++
		u, err := Parse("https://"+c.Input+"/x", nil)
		switch {
		case c.Output == nil && err == nil:
			t.Errorf("%s: got host %s, want failure", quote(c.Input), quote(u.Hostname()))
		case c.Output != nil && err != nil:
			t.Errorf("%s: failed (%v), want %s", quote(c.Input), err, quote(*c.Output))
		case c.Output != nil && u.Hostname() != *c.Output:
			t.Errorf("%s: host %s, want %s", quote(c.Input), quote(u.Hostname()), quote(*c.Output))
		default:
			pass++
		}
	}
	t.Logf("IdnaTestV2.json: %d/%d pass", pass, total)
}
