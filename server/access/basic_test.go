package access

import (
	"encoding/base64"
	"testing"
)

// secretHash is bcrypt("secret"), cost 10.
const secretHash = "$2a$10$utS24a/0RWW..DRCeWjd9OUkW8WhLsC7MFl04n9UKUmqqCq4ZE8lC"

func basicValue(user, pass string) []byte {
	return []byte("Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}

func TestBasic(t *testing.T) {
	b, err := NewBasic(`edge "x"`, map[string]string{"alice": secretHash})
	if err != nil {
		t.Fatal(err)
	}
	if b.Challenge() != `Basic realm="edge \"x\"", charset="UTF-8"` {
		t.Errorf("challenge %s", b.Challenge())
	}
	for _, v := range [][]byte{nil, []byte("Bearer x"), []byte("Basic !!!"), []byte("Basic " + base64.StdEncoding.EncodeToString([]byte("nocolon")))} {
		if b.Lookup(v) != Missing || b.Verify(v) {
			t.Errorf("%q: accepted or not Missing", v)
		}
	}
	good := basicValue("alice", "secret")
	if b.Lookup(good) != Unverified {
		t.Fatal("uncached credentials not Unverified")
	}
	if b.Verify(basicValue("alice", "wrong")) || b.Verify(basicValue("bob", "secret")) {
		t.Fatal("wrong password or unknown user accepted")
	}
	if b.Lookup(basicValue("alice", "wrong")) != Unverified {
		t.Fatal("a failed verification was cached")
	}
	if !b.Verify(good) {
		t.Fatal("right password refused")
	}
	if b.Lookup(good) != Cached || b.Lookup([]byte("bAsIc  "+string(good[6:]))) != Cached {
		t.Fatal("verified credentials not cached")
	}
	if n := testing.AllocsPerRun(100, func() { b.Lookup(good) }); n != 0 {
		t.Errorf("%v allocations per cached Lookup", n)
	}
	if _, err := NewBasic("r", map[string]string{"a": "plain"}); err != ErrBadHash {
		t.Errorf("plain password accepted as a hash: %v", err)
	}
	if _, err := NewBasic("r", nil); err != ErrNoUsers {
		t.Error(err)
	}
}

// TestBasicCacheBounded: the cache never exceeds its size.
func TestBasicCacheBounded(t *testing.T) {
	b, _ := NewBasic("r", map[string]string{"alice": secretHash})
	for i := range basicCacheSize + 10 {
		var k [32]byte
		k[0], k[1] = byte(i), byte(i>>8)
		b.remember(k)
	}
	if !b.Verify(basicValue("alice", "secret")) || len(b.cache) > basicCacheSize {
		t.Fatalf("cache holds %d", len(b.cache))
	}
}
