package rbuf

import "testing"

func TestCompact(t *testing.T) {
	buf := []byte("abcdefgh")
	got, w := Compact(buf, 3, 6)
	if w != 3 || string(got[:w]) != "def" || len(got) != 8 || &got[0] != &buf[0] {
		t.Errorf("Compact(3, 6) = %q (len %d), %d; want \"def\" in place", got[:w], len(got), w)
	}
	got, w = Compact([]byte("abcd"), 0, 4)
	if w != 4 || string(got[:w]) != "abcd" || len(got) != 8 {
		t.Errorf("full buffer: %q (len %d), %d; want abcd in a buffer of 8", got[:w], len(got), w)
	}
	got, w = Compact([]byte("abcd"), 4, 4)
	if w != 0 || len(got) != 4 {
		t.Errorf("all read: len %d, w %d; want the same buffer, empty", len(got), w)
	}
}
