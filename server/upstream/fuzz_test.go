package upstream

import (
	"bytes"
	"testing"
)

// FuzzHashKeyExtract: extraction reads untrusted request bytes (targets,
// Cookie fields): it never panics, and what it returns is a piece of the
// request (a view, never invented bytes), except the "/" of a bare
// absolute-form target.
func FuzzHashKeyExtract(f *testing.F) {
	f.Add("/a/b?user=x&y", "a=1; session=abc", "session")
	f.Add("http://h?q=1", "=;;= ;", "q")
	f.Add("http://h", "", "")
	f.Add("?", "a", "a")
	f.Fuzz(func(t *testing.T, target, cookieField, name string) {
		r := &byteReq{cookie: []byte(cookieField), target: []byte(target), ip: []byte("192.0.2.1")}
		for _, kind := range []string{"cookie:", "query:", "header:"} {
			k, err := ParseHashKey(kind + name)
			if err != nil {
				continue
			}
			if v := k.Extract(r); v != nil && !bytes.Contains([]byte(target), v) && !bytes.Contains([]byte(cookieField), v) {
				t.Fatalf("%s%s: %q is in neither input", kind, name, v)
			}
		}
		for _, s := range []string{"path", "client_ip"} {
			k, _ := ParseHashKey(s)
			if v := k.Extract(r); v != nil && !bytes.Contains([]byte(target), v) && string(v) != "/" && string(v) != "192.0.2.1" {
				t.Fatalf("%s: %q", s, v)
			}
		}
		if set, err := ParseStatusSet(target); err == nil && set.IsZero() {
			t.Fatalf("status set %q parsed empty", target)
		}
	})
}
