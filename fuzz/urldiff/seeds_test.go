package urldiff

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// wptCases returns the inputs and bases of the vendored urltestdata.json.
func wptCases(tb testing.TB) (inputs, bases []string) {
	b, err := os.ReadFile(filepath.Join(repoRoot(), "parse", "url", "testdata", "wpt", "urltestdata.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var cases []any
	if err := json.Unmarshal(b, &cases); err != nil {
		tb.Fatal(err)
	}
	for _, c := range cases {
		if m, ok := c.(map[string]any); ok {
			in, _ := m["input"].(string)
			base, _ := m["base"].(string)
			inputs, bases = append(inputs, in), append(bases, base)
		}
	}
	return inputs, bases
}

// corpusURLs returns up to n lines of a shared URL corpus, or none when the
// shared data is not beside the repository.
func corpusURLs(name string, n int) []string {
	f, err := os.Open(filepath.Join(repoRoot(), "..", "shared", "data", "urls", name))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < n {
		out = append(out, sc.Text())
	}
	return out
}
