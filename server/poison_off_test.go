//go:build !simdedgedebug

package server

import "testing"

// TestPoisonOff documents that normal builds do not poison (the check
// lives in poison_test.go, built with -tags simdedgedebug).
func TestPoisonOff(t *testing.T) {
	if Poisoning {
		t.Fatal("Poisoning set without the simdedgedebug tag")
	}
	b := []byte("view")
	poison(b)
	if string(b) != "view" {
		t.Fatal("poison changed bytes in a normal build")
	}
}
