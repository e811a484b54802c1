//go:build !linux

package json

import (
	"testing"
	"time"
)

// CPU time per op is only reported on Linux.
func cpuTime() time.Duration                  { return 0 }
func reportCPU(_ *testing.B, _ time.Duration) {}
