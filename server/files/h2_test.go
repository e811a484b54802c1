package files_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testnet"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/compress"
	"github.com/simdedge/simdedge/server/files"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// TestH2FilesAndCompression: over HTTP/2 (h2c) a files route serves whole
// files and ranges past the flow-control windows (the stream copies: no
// sendfile into a multiplexed connection), and a compressing route's
// answer arrives gzip-encoded and decodes to the original, on every
// engine.
func TestH2FilesAndCompression(t *testing.T) {
	dir := t.TempDir()
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644); err != nil {
		t.Fatal(err)
	}
	small := jsonDoc(8 << 10)
	if err := os.WriteFile(filepath.Join(dir, "small.json"), small, 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := files.New(files.Options{Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := compress.New(compress.Options{Encodings: []string{"gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	doc := string(jsonDoc(16 << 10))
	tab, err := router.New([]router.Route{
		{Match: router.Match{PathPrefix: "/json"}, Handler: router.Compress(router.Respond(200, doc, [][2]string{{"Content-Type", "application/json"}}), pol)},
		{Match: router.Match{PathPrefix: "/small"}, Handler: router.Compress(fh, pol)},
		{Match: router.Match{PathPrefix: "/"}, Handler: fh},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: tab})
	addr := servetest.ServeH2C(t, s, testEngine)
	tr := testnet.H2Transport(nil)
	c := &http.Client{Timeout: 10 * time.Second, Transport: tr}
	defer tr.CloseIdleConnections()
	base := "http://" + addr

	get := func(path string, hdr ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.ProtoMajor != 2 {
			t.Fatalf("%s: protocol %s", path, resp.Proto)
		}
		return resp, b
	}
	if resp, b := get("/big.bin"); resp.StatusCode != 200 || !bytes.Equal(b, big) {
		t.Errorf("whole file: %d, %d bytes, equal %v", resp.StatusCode, len(b), bytes.Equal(b, big))
	}
	if resp, b := get("/big.bin", "Range", "bytes=100000-700000"); resp.StatusCode != 206 || !bytes.Equal(b, big[100000:700001]) {
		t.Errorf("range: %d, %d bytes", resp.StatusCode, len(b))
	}
	// Go's client asks for gzip itself and decodes it (Uncompressed).
	if resp, b := get("/json"); resp.StatusCode != 200 || !resp.Uncompressed || string(b) != doc {
		t.Errorf("compressed: %d, uncompressed by the client %v, %d bytes, equal %v", resp.StatusCode, resp.Uncompressed, len(b), string(b) == doc)
	}
	// A compressed file: its declared length is the identity one's, which
	// must not reach the HEADERS frame (a length mismatch is a stream
	// error for the client).
	if resp, b := get("/small.json", "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Equal(decode(t, "gzip", b), small) {
		t.Errorf("compressed file: Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(b))
	}
	if resp, b := get("/small.json"); !resp.Uncompressed || !bytes.Equal(b, small) {
		t.Errorf("compressed file, decoded by the client: %v, %d bytes", resp.Uncompressed, len(b))
	}
	// Asked for gzip explicitly, the bytes on the wire are gzip.
	if resp, b := get("/json", "Accept-Encoding", "gzip"); resp.Header.Get("Content-Encoding") != "gzip" || string(decode(t, "gzip", b)) != doc {
		t.Errorf("gzip: Content-Encoding %q, %d bytes", resp.Header.Get("Content-Encoding"), len(b))
	}
}
