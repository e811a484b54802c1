package micro

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// sharedData reads a file from the shared data directory (../shared/data
// beside the repository, or $SIMDEDGE_DATA) and skips the benchmark with a
// message when it is absent.
func sharedData(tb testing.TB, rel string) []byte {
	tb.Helper()
	dir := os.Getenv("SIMDEDGE_DATA")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "data")
	}
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		tb.Skipf("corpus %s not available: %v", rel, err)
	}
	return b
}
