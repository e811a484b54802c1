//go:build linux

package server

import (
	"testing"
	"unsafe"
)

// lconnMax is the most an lconn may take: an idle plain connection on the
// loop keeps only its lconn and its client address (about 60 bytes), and
// issue 31 wants under 1 KiB of RSS per idle connection, about twice the
// live heap in a Go process. 256 is a malloc size class; it was 496 (the
// 512 class) before the proxy exchange went out of line and the parked
// identity into a connOrigin (docs/decisions/0049-small-idle-connections.md).
const lconnMax = 256

// TestLconnSize: an lconn, all of which an idle loop connection keeps, stays
// within lconnMax, and its parked record within a tenth of a KiB.
func TestLconnSize(t *testing.T) {
	if n := unsafe.Sizeof(lconn{}); n > lconnMax {
		t.Errorf("lconn is %d bytes, want at most %d: keep rarely used state out of line", n, lconnMax)
	}
	if n := unsafe.Sizeof(parked{}); n > 96 {
		t.Errorf("parked is %d bytes, want at most 96: listener-wide fields belong in connOrigin", n)
	}
}

// TestIdleSinceBothStates: idleSince (the reclaim and Shutdown scans ask
// it of every connection) reads the settings of a connection with a conn
// from the conn and of a parked one from its connOrigin: a parked
// record's origin is nil while the connection has a conn.
func TestIdleSinceBothStates(t *testing.T) {
	cfg := &settings{Timeouts: Timeouts{Idle: 100, ReadHeader: 10}}
	lc := &lconn{c: &conn{cfg: cfg}, rdl: 1000, established: true}
	if since, ok := lc.idleSince(); !ok || since != 900 {
		t.Errorf("with a conn: %d %v, want 900 true", since, ok)
	}
	lc = &lconn{pk: parked{o: &connOrigin{cfg: cfg}}, parked: true, rdl: 1000}
	if since, ok := lc.idleSince(); !ok || since != 990 {
		t.Errorf("parked: %d %v, want 990 true", since, ok)
	}
}
