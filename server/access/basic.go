package access

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"sync"

	"golang.org/x/crypto/bcrypt"

	"github.com/simdedge/simdedge/internal/ascii"
)

// HTTP Basic authentication (RFC 7617) against bcrypt hashes.
//
// bcrypt at cost 10 takes 50-100 ms of CPU by design, so a server cannot
// pay it per request: like Caddy, a successful verification is cached,
// keyed by a salted SHA-256 of the credentials (never the password
// itself), in a bounded table, and later requests with the same
// credentials cost one hash and one map lookup. Only the engines' choice
// of where to run differs: the event loop answers cached and missing
// credentials inline (Lookup) and hands requests that need bcrypt to a
// goroutine (Verify), so a loop never stalls for a hash.

// Errors of NewBasic.
var (
	ErrNoUsers = errors.New("access: basic auth needs at least one user")
	ErrBadHash = errors.New("access: not a bcrypt hash")
)

const (
	// maxCredentials bounds the decoded user:password (a longer
	// Authorization field is refused without decoding it); bcrypt
	// itself uses at most 72 bytes of a password.
	maxCredentials = 512
	// basicCacheSize bounds the cache of verified credentials (Caddy
	// keeps 1000); when full, an arbitrary entry makes room.
	basicCacheSize = 1024
	// dummyHash is compared against for unknown users, so that an
	// unknown user costs the same time as a wrong password (no user
	// enumeration by timing). bcrypt of "simdedge-dummy", cost 10.
	dummyHash = "$2a$10$6JhxPWERngt3AnEWvNpBqOSNlclXe9WTFyk2/T.aAY8k5mcfAl9y."
)

// Basic checks Basic credentials against users' bcrypt hashes. It is
// safe for concurrent use.
type Basic struct {
	realm string
	// challenge is the WWW-Authenticate value.
	challenge string
	users     map[string][]byte
	salt      [16]byte

	mu    sync.Mutex
	cache map[[sha256.Size]byte]struct{}
}

// NewBasic returns a checker for users (name: bcrypt hash).
func NewBasic(realm string, users map[string]string) (*Basic, error) {
	if len(users) == 0 {
		return nil, ErrNoUsers
	}
	b := &Basic{realm: realm, users: map[string][]byte{}, cache: map[[sha256.Size]byte]struct{}{}}
	for u, h := range users {
		if _, err := bcrypt.Cost([]byte(h)); err != nil {
			return nil, ErrBadHash
		}
		b.users[u] = []byte(h)
	}
	rand.Read(b.salt[:])
	b.challenge = `Basic realm="` + quoteRealm(realm) + `", charset="UTF-8"`
	return b, nil
}

// Challenge is the WWW-Authenticate field value of a 401.
func (b *Basic) Challenge() string { return b.challenge }

// quoteRealm escapes a realm for a quoted-string (RFC 9110 §5.6.4).
func quoteRealm(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' {
			out = append(out, '\\')
		}
		if c >= 0x20 && c != 0x7f {
			out = append(out, c)
		}
	}
	return string(out)
}

// Status is Lookup's answer.
type Status uint8

const (
	// Missing: no usable Basic credentials; answer 401.
	Missing Status = iota
	// Cached: the credentials were verified before; let the request in.
	Cached
	// Unverified: the credentials need bcrypt (Verify), off the loop.
	Unverified
)

// Lookup decides what it can without bcrypt, from the Authorization
// field's value (nil if absent). It allocates nothing.
func (b *Basic) Lookup(authz []byte) Status {
	var buf [maxCredentials]byte
	cred, ok := decodeBasic(authz, buf[:])
	if !ok {
		return Missing
	}
	k := b.key(cred)
	b.mu.Lock()
	_, hit := b.cache[k]
	b.mu.Unlock()
	if hit {
		return Cached
	}
	return Unverified
}

// Verify reports whether authz carries a known user's right password,
// running bcrypt unless the credentials are cached. It may take tens of
// milliseconds of CPU: never call it on an event loop.
func (b *Basic) Verify(authz []byte) bool {
	var buf [maxCredentials]byte
	cred, ok := decodeBasic(authz, buf[:])
	if !ok {
		return false
	}
	k := b.key(cred)
	b.mu.Lock()
	_, hit := b.cache[k]
	b.mu.Unlock()
	if hit {
		return true
	}
	user, pass := splitCred(cred)
	hash, known := b.users[string(user)]
	if !known {
		hash = []byte(dummyHash)
	}
	// CompareHashAndPassword compares in constant time.
	if bcrypt.CompareHashAndPassword(hash, pass) != nil || !known {
		return false
	}
	b.remember(k)
	return true
}

// remember caches a verified key, making room first when the cache is
// full (an arbitrary entry goes: map iteration order is random).
func (b *Basic) remember(k [sha256.Size]byte) {
	b.mu.Lock()
	if len(b.cache) >= basicCacheSize {
		for old := range b.cache {
			delete(b.cache, old)
			break
		}
	}
	b.cache[k] = struct{}{}
	b.mu.Unlock()
}

// key is the cache key of the decoded credentials: salted so that the
// table's contents say nothing about the passwords.
func (b *Basic) key(cred []byte) [sha256.Size]byte {
	var in [len(Basic{}.salt) + maxCredentials]byte
	n := copy(in[:], b.salt[:])
	n += copy(in[n:], cred)
	return sha256.Sum256(in[:n])
}

// decodeBasic returns the user:password of a "Basic" Authorization value
// (scheme case-insensitive, RFC 9110 §11.1), decoded into buf.
func decodeBasic(v, buf []byte) ([]byte, bool) {
	const scheme = "basic "
	if len(v) <= len(scheme) {
		return nil, false
	}
	for i := 0; i < len(scheme); i++ {
		if v[i]|0x20 != scheme[i] && !(scheme[i] == ' ' && v[i] == ' ') {
			return nil, false
		}
	}
	v = ascii.TrimOWS(v[len(scheme):])
	if base64.StdEncoding.DecodedLen(len(v)) > len(buf) {
		return nil, false
	}
	n, err := base64.StdEncoding.Decode(buf, v)
	if err != nil {
		return nil, false
	}
	cred := buf[:n]
	for _, c := range cred {
		if c == ':' {
			return cred, true
		}
	}
	return nil, false
}

func splitCred(cred []byte) (user, pass []byte) {
	for i, c := range cred {
		if c == ':' {
			return cred[:i], cred[i+1:]
		}
	}
	return cred, nil
}
