//go:build linux

package server

import "testing"

// TestNoExchangeUnwritten: the shared empty exchange that every lconn
// without a proxied request points at is still zero after the suite's
// loop tests ran (a write to it would reach every connection of every
// loop).
func TestNoExchangeUnwritten(t *testing.T) {
	if noExchange != (lexchange{}) {
		t.Errorf("noExchange was written: %+v", noExchange)
	}
}
