package files_test

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testcert"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/files"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// TestFilesTLS: over TLS (no sendfile: records are sealed in the process)
// files come whole, small and large, ranged and compressed, on both
// engines (the loop drives TLS itself and hands large files to a
// goroutine with the connection's TLS state).
func TestFilesTLS(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	tab := gzipTable(t, tr.root)
	ca := testcert.NewCA(t, "edge CA")
	leaf := ca.Leaf(t, "edge", []string{"edge.example"}, time.Time{}, time.Time{})
	s := server.New(server.Options{Handler: router.NewSwitch(tab)})
	addr := servetest.ServeTLS(t, s, testEngine, server.TLSOptions{Config: &tls.Config{Certificates: []tls.Certificate{leaf.TLS}}})
	htr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool, ServerName: "edge.example"}}
	t.Cleanup(htr.CloseIdleConnections)
	c := &http.Client{Transport: htr, Timeout: testTimeout}
	base := "https://" + addr
	for range 2 { // the second time on the kept-alive connection
		resp, b := do(t, c, "GET", base+"/small.txt")
		if resp.StatusCode != 200 || string(b) != "0123456789abcdefghijklmnopqrstuvwxyz\n" {
			t.Errorf("small: %d %q", resp.StatusCode, b)
		}
		resp, b = do(t, c, "GET", base+"/big.bin")
		if resp.StatusCode != 200 || !bytes.Equal(b, tr.big) {
			t.Errorf("big: %d, %d bytes", resp.StatusCode, len(b))
		}
		resp, b = do(t, c, "GET", base+"/big.bin", "Range", "bytes=100-199999")
		if resp.StatusCode != 206 || !bytes.Equal(b, tr.big[100:200000]) {
			t.Errorf("big range: %d, %d bytes", resp.StatusCode, len(b))
		}
		// The Go client asks for gzip and decodes it itself.
		resp, b = do(t, c, "GET", base+"/c/big.json")
		if resp.StatusCode != 200 || !resp.Uncompressed || !bytes.Equal(b, jsonDoc(len(b))) || len(b) != 3*files.InlineMax {
			t.Errorf("compressed: %d uncompressed=%v, %d bytes", resp.StatusCode, resp.Uncompressed, len(b))
		}
	}
}
