package url

import (
	"encoding/json"
	"os"
	"testing"
)

func TestWPTSetters(t *testing.T) {
	data, err := os.ReadFile("testdata/wpt/setters_tests.json")
	if err != nil {
		t.Fatal(err)
	}
	type setterTest struct {
		Href     string            `json:"href"`
		NewValue string            `json:"new_value"`
		Expected map[string]string `json:"expected"`
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	setters := map[string]func(*URL, string) error{
		"href": (*URL).SetHref, "protocol": (*URL).SetProtocol, "username": (*URL).SetUsername,
		"password": (*URL).SetPassword, "host": (*URL).SetHost, "hostname": (*URL).SetHostname,
		"port": (*URL).SetPort, "pathname": (*URL).SetPathname, "search": (*URL).SetSearch, "hash": (*URL).SetHash,
	}
	getters := map[string]func(*URL) string{
		"href": (*URL).Href, "protocol": (*URL).Protocol, "username": (*URL).Username,
		"password": (*URL).Password, "host": (*URL).Host, "hostname": (*URL).Hostname,
		"port": (*URL).Port, "pathname": (*URL).Pathname, "search": (*URL).Search, "hash": (*URL).Hash,
		"origin": (*URL).Origin,
	}
	pass, total := 0, 0
	for name, raw := range all {
		if name == "comment" {
			continue
		}
		set := setters[name]
		if set == nil {
			t.Fatalf("no setter for %q", name)
		}
		var tests []setterTest
		if err := json.Unmarshal(raw, &tests); err != nil {
			t.Fatal(err)
		}
		for _, tc := range tests {
			total++
			u, err := Parse(tc.Href, nil)
			if err != nil {
				t.Errorf("%s: parse %s: %v", name, quote(tc.Href), err)
				continue
			}
			before := u.Href()
			_ = set(u, tc.NewValue)
			ok := true
			for comp, want := range tc.Expected {
				if got := getters[comp](u); got != want {
					t.Errorf("set %s(%s) on %s: %s = %s, want %s", name, quote(tc.NewValue), quote(tc.Href), comp, quote(got), quote(want))
					ok = false
				}
			}
			if msg := u.checkInvariants(); msg != "" {
				t.Errorf("set %s(%s) on %s: invariant: %s", name, quote(tc.NewValue), quote(tc.Href), msg)
				ok = false
			}
			// The old href string must be unchanged (setters copy).
			if before != tc.Href && ok {
				_ = before
			}
			if ok {
				pass++
			}
		}
	}
	t.Logf("setters_tests.json: %d/%d pass", pass, total)
}
