package edgetls

import (
	"crypto/rand"
	"crypto/tls"
	"sync"
	"sync/atomic"
	"time"
)

// tickets rotates the session ticket keys of a base tls.Config. crypto/tls
// would rotate its own keys daily and keep them a week; the edge rotates
// more often (Options.TicketRotation) so that a leaked key opens fewer
// sessions. The check runs at each handshake (one clock read per handshake,
// never per request) instead of on a timer, so no goroutine outlives the
// Store.
type tickets struct {
	next atomic.Int64 // unix nanoseconds of the next rotation
	mu   sync.Mutex
	keys [][32]byte // newest first; the first encrypts, all decrypt
	// quic is the Store's QUIC base (QUICConfig), whose keys rotate with
	// the TCP base's: a ticket from either resumes on both.
	quic *tls.Config
}

func (t *tickets) init(base *tls.Config, every time.Duration, now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rotate(base, every, now)
}

func (t *tickets) rotateIfDue(base *tls.Config, every time.Duration, now time.Time) {
	if now.UnixNano() < t.next.Load() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if now.UnixNano() >= t.next.Load() {
		t.rotate(base, every, now)
	}
}

// rotate puts a new key first and drops keys beyond TicketKeysKept. Called
// with mu held.
func (t *tickets) rotate(base *tls.Config, every time.Duration, now time.Time) {
	var k [32]byte
	rand.Read(k[:]) // never fails (crypto/rand, Go 1.24+)
	t.keys = append([][32]byte{k}, t.keys...)
	if len(t.keys) > TicketKeysKept {
		t.keys = t.keys[:TicketKeysKept]
	}
	base.SetSessionTicketKeys(t.keys)
	if t.quic != nil {
		t.quic.SetSessionTicketKeys(t.keys)
	}
	t.next.Store(now.Add(every).UnixNano())
}
