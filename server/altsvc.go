package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Alt-Svc (RFC 7838): a TCP listener whose address also serves HTTP/3
// tells its HTTP/1.1 and HTTP/2 clients so in every response, which is how
// browsers find HTTP/3 (RFC 9114 §3.1.1).

// listenerAltSvc holds the listeners' Alt-Svc values (SetListenerAltSvc):
// an immutable map behind an atomic pointer, read once per accepted
// connection, as listenerPaths.
type listenerAltSvc struct {
	mu  sync.Mutex // serialises writers
	cur atomic.Pointer[map[any]string]
}

// SetListenerAltSvc makes the responses on the connections listener l (as
// later given to ServeTCP, ServeTLS or ServeLoop) accepts from then on
// carry the field "Alt-Svc: value"; "" takes it away.
func (s *Server) SetListenerAltSvc(l any, value string) {
	la := &s.laltsvc
	la.mu.Lock()
	defer la.mu.Unlock()
	m := map[any]string{}
	if old := la.cur.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	if value == "" {
		delete(m, l)
	} else {
		m[l] = value
	}
	la.cur.Store(&m)
}

// altSvcFor is the Alt-Svc value of listener l's new connection.
func (s *Server) altSvcFor(l any) string {
	m := s.laltsvc.cur.Load()
	if m == nil {
		return ""
	}
	return (*m)[unwrapListener(l)]
}

// H3AltSvc is the Alt-Svc value that advertises HTTP/3 on port of the
// same host for maxAge (RFC 7838 §3: ma in seconds).
func H3AltSvc(port int, maxAge time.Duration) string {
	return `h3=":` + strconv.Itoa(port) + `"; ma=` + strconv.FormatInt(int64(maxAge/time.Second), 10)
}
