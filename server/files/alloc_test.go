package files_test

import (
	"io"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/compress"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// TestZeroAllocCompressed: a warm keep-alive request whose answer is
// compressed (gzip, zstd) allocates nothing on the server: the encoders
// come from their pools, and the body reaches them through the writer's
// own staging buffer.
func TestZeroAllocCompressed(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("short, or the race detector (sync.Pool drops items under it)")
	}
	body := string(jsonDoc(4 << 10))
	pol, err := compress.New(compress.Options{Encodings: []string{"zstd", "gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := router.New([]router.Route{
		{Handler: router.Compress(router.Respond(200, body, [][2]string{{"Content-Type", "application/json"}}), pol)},
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.CheckGoroutines(t)
	s := server.New(server.Options{Handler: tab})
	c := testnet.Dial(t, servetest.Serve(t, s, testEngine), testTimeout)
	for _, coding := range []string{"gzip", "zstd"} {
		req := []byte("GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: " + coding + "\r\n\r\n")
		buf := make([]byte, 64<<10)
		// The answer's length is the same every time (same input,
		// same encoder settings); the Date field has a fixed width.
		size := len(testnet.Exchange(t, c, req, buf))
		if !strings.Contains(string(buf[:size]), "Content-Encoding: "+coding) {
			t.Fatalf("%s: got %q", coding, buf[:min(size, 300)])
		}
		allocs := testing.AllocsPerRun(100, func() {
			c.Write(req)
			io.ReadFull(c, buf[:size])
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per request", coding, allocs)
		}
	}
}
