//go:build !rdma || !cgo

package rdma_test

import (
	"errors"
	"testing"

	"github.com/simdedge/simdedge/rdma"
)

// Without the rdma tag (or without cgo) every constructor says so.
func TestNotSupported(t *testing.T) {
	f, err := rdma.OpenFabric(rdma.Options{Provider: "tcp"})
	if !errors.Is(err, rdma.ErrNotSupported) || f != nil {
		t.Fatalf("OpenFabric = %v, %v; want nil, ErrNotSupported", f, err)
	}
	var zero *rdma.Fabric = new(rdma.Fabric)
	if _, err := zero.Listen("127.0.0.1:0"); !errors.Is(err, rdma.ErrNotSupported) {
		t.Errorf("Listen = %v, want ErrNotSupported", err)
	}
	if _, err := zero.Dial("127.0.0.1:1", 0); !errors.Is(err, rdma.ErrNotSupported) {
		t.Errorf("Dial = %v, want ErrNotSupported", err)
	}
	if _, err := zero.Register(4096); !errors.Is(err, rdma.ErrNotSupported) {
		t.Errorf("Register = %v, want ErrNotSupported", err)
	}
	if got := rdma.Stats(); got != (rdma.Counts{}) {
		t.Errorf("Stats = %+v, want zero", got)
	}
}
