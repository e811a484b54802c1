package files

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	for _, tc := range []struct {
		in, rel string
		dir     bool
		bad     bool
	}{
		{"/", ".", true, false},
		{"/a/b.txt", "a/b.txt", false, false},
		{"/a/b/", "a/b", true, false},
		{"//a//./b/", "a/b", true, false},
		{"/a%20b", "a b", false, false},
		{"/%41", "A", false, false},
		{"/...", "...", false, false},
		{"/a/.hidden", "a/.hidden", false, false},
		{"/./", ".", true, false},
		{"/.", ".", true, false},
		{"/a/.", "a", true, false},
		{"/a/%2e", "a", true, false},
		{"/a/./", "a", true, false},
		{"/a/.b", "a/.b", false, false},
		{"/..", "", false, true},
		{"/a/../b", "", false, true},
		{"/%2e%2e/x", "", false, true},
		{"/%2E%2e/x", "", false, true},
		{"/.%2E", "", false, true},
		{"/a%2fb", "", false, true},
		{"/a%2Fb", "", false, true},
		{"/a\\b", "", false, true},
		{"/a%5cb", "", false, true},
		{"/a%00", "", false, true},
		{"/a\x00", "", false, true},
		{"/a%0a", "", false, true},
		{"/a%7f", "", false, true},
		{"/%", "", false, true},
		{"/%4", "", false, true},
		{"/%zz", "", false, true},
		{"a", "", false, true},
		{"", "", false, true},
	} {
		rel, dir, err := Resolve([]byte(tc.in))
		if (err != nil) != tc.bad || !tc.bad && (rel != tc.rel || dir != tc.dir) {
			t.Errorf("%q: %q %v %v; want %q %v bad=%v", tc.in, rel, dir, err, tc.rel, tc.dir, tc.bad)
		}
	}
}

// FuzzResolve: whatever the path, Resolve never panics and what it
// accepts stays under the root lexically: no ".." segment, no absolute
// path, no NUL or backslash, and joined to a root it cleans to a path
// under that root.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"/", "/a/b", "/../x", "/%2e%2e/x", "/a%2fb", "/a\\b", "//x", "/.%2e/", "/%00", "/a/./b/"} {
		f.Add(s)
	}
	const root = "/srv/www"
	f.Fuzz(func(t *testing.T, p string) {
		rel, _, err := Resolve([]byte(p))
		if err != nil {
			return
		}
		if rel == "" || strings.HasPrefix(rel, "/") || strings.ContainsAny(rel, "\x00\\") {
			t.Fatalf("%q -> %q", p, rel)
		}
		for _, seg := range strings.Split(rel, "/") {
			if seg == ".." || seg == "" || seg == "." && rel != "." {
				t.Fatalf("%q -> %q: segment %q", p, rel, seg)
			}
		}
		if j := filepath.Join(root, rel); j != root && !strings.HasPrefix(j, root+"/") {
			t.Fatalf("%q -> %q escapes to %q", p, rel, j)
		}
	})
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		v             string
		size          int64
		kind          int
		start, length int64
	}{
		{"bytes=0-0", 10, rangeOne, 0, 1},
		{"bytes=0-", 10, rangeOne, 0, 10},
		{"bytes=9-", 10, rangeOne, 9, 1},
		{"bytes=10-", 10, rangeUnsatisfiable, 0, 0},
		{"bytes=-3", 10, rangeOne, 7, 3},
		{"bytes=-30", 10, rangeOne, 0, 10},
		{"bytes=-0", 10, rangeUnsatisfiable, 0, 0},
		{"bytes=-1", 0, rangeUnsatisfiable, 0, 0},
		{"Bytes = 2-4", 10, rangeNone, 0, 0},
		{"BYTES=2-4", 10, rangeOne, 2, 3},
		{"bytes=2-1", 10, rangeNone, 0, 0},
		{"bytes=1-2,4-5", 10, rangeNone, 0, 0},
		{"bytes=a-b", 10, rangeNone, 0, 0},
		{"bytes=-", 10, rangeNone, 0, 0},
		{"bytes=99999999999999999999-", 10, rangeNone, 0, 0},
		{"bytes=5-999999999999999999", 10, rangeOne, 5, 5},
	} {
		k, s, l := parseRange([]byte(tc.v), tc.size)
		if k != tc.kind || s != tc.start || l != tc.length {
			t.Errorf("%q size %d: %d %d %d; want %d %d %d", tc.v, tc.size, k, s, l, tc.kind, tc.start, tc.length)
		}
	}
}

// FuzzRange: any Range value gives a range inside the file or none.
func FuzzRange(f *testing.F) {
	f.Add("bytes=0-5", int64(10))
	f.Add("bytes=-5", int64(3))
	f.Fuzz(func(t *testing.T, v string, size int64) {
		if size < 0 {
			size = -size
		}
		if size < 0 {
			return
		}
		k, s, l := parseRange([]byte(v), size)
		if k == rangeOne && (s < 0 || l <= 0 || s+l > size) {
			t.Fatalf("%q size %d: start %d length %d", v, size, s, l)
		}
	})
}
