package proxy

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/compress"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// startCompressProxy serves a compressing proxy route in front of o.
func startCompressProxy(t *testing.T, o *origin, encodings ...string) string {
	t.Helper()
	up := newUpstream(t, UpstreamOptions{Targets: []string{o.addr}})
	pol, err := compress.New(compress.Options{Encodings: encodings, MinLength: 1024})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := router.New([]router.Route{{Handler: router.Compress(New(up, Options{}), pol)}})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(tab), LoopProxy: testLoopProxy})
	return servetest.Serve(t, s, testEngine)
}

// apiJSON is n bytes of an API-like JSON answer.
func apiJSON(n int) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i := 0; b.Len() < n-80; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":%d,"user":"u%d","score":%d,"ok":true}`, i, i%97, i*31%1000)
	}
	for b.Len() < n-1 {
		b.WriteByte(' ')
	}
	b.WriteByte(']')
	return b.Bytes()
}

func decodeBody(t *testing.T, coding string, r io.Reader) io.Reader {
	t.Helper()
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		return zr
	case "br":
		return brotli.NewReader(r)
	case "zstd":
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		t.Cleanup(zr.Close)
		return zr
	}
	return r
}

// TestCompressProxy: proxied answers (Content-Length, chunked, streamed
// with flushes) are compressed with the coding asked for and decode to
// the origin's bytes; already-encoded, 206, 304 and 204 answers pass
// untouched (no double compression).
func TestCompressProxy(t *testing.T) {
	testenv.CheckGoroutines(t)
	doc := apiJSON(200 << 10)
	pre := func() []byte { // the origin's own gzip of doc
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(doc)
		zw.Close()
		return b.Bytes()
	}()
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/length":
			w.Header().Set("Content-Length", strconv.Itoa(len(doc)))
			w.Write(doc)
		case "/chunked":
			for i := 0; i < len(doc); i += 7000 {
				w.Write(doc[i:min(i+7000, len(doc))])
				w.(http.Flusher).Flush()
			}
		case "/trickle":
			// A small first piece, flushed, then the rest: the
			// proxies flush what they relayed before waiting for
			// more, while the length is still unknown.
			w.Write(doc[:100])
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond)
			w.Write(doc[100:])
		case "/encoded":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(pre)
		case "/partial":
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-4999/%d", len(doc)))
			w.WriteHeader(206)
			w.Write(doc[:5000])
		case "/notmod":
			w.WriteHeader(304)
		case "/nocontent":
			w.WriteHeader(204)
		}
	}))
	addr := startCompressProxy(t, o, "zstd", "br", "gzip")
	c := client(t)
	c.Transport.(*http.Transport).DisableCompression = true
	for _, coding := range []string{"gzip", "br", "zstd", ""} {
		for _, path := range []string{"/length", "/chunked", "/trickle"} {
			for range 2 { // a fresh and a pooled upstream connection
				req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
				if coding != "" {
					req.Header.Set("Accept-Encoding", coding+", identity;q=0.5")
				}
				resp, b := get(t, c, req)
				if got := resp.Header.Get("Content-Encoding"); resp.StatusCode != 200 || got != coding {
					t.Fatalf("%s %s: %d Content-Encoding %q", coding, path, resp.StatusCode, got)
				}
				if resp.Header.Get("Vary") != "Accept-Encoding" {
					t.Errorf("%s %s: Vary %q", coding, path, resp.Header.Get("Vary"))
				}
				plain, err := io.ReadAll(decodeBody(t, coding, bytes.NewReader(b)))
				if err != nil || !bytes.Equal(plain, doc) {
					t.Fatalf("%s %s: decoded %d bytes (%v), want %d", coding, path, len(plain), err, len(doc))
				}
				if coding != "" && (resp.ContentLength != -1 || len(resp.TransferEncoding) == 0) {
					t.Errorf("%s %s: Content-Length %d TE %v: want chunked", coding, path, resp.ContentLength, resp.TransferEncoding)
				}
			}
		}
	}
	for _, tc := range []struct {
		path   string
		status int
		body   []byte
		ce     string
	}{
		{"/encoded", 200, pre, "gzip"},
		{"/partial", 206, doc[:5000], ""},
		{"/notmod", 304, nil, ""},
		{"/nocontent", 204, nil, ""},
	} {
		req, _ := http.NewRequest("GET", "http://"+addr+tc.path, nil)
		req.Header.Set("Accept-Encoding", "gzip, br, zstd")
		resp, b := get(t, c, req)
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Encoding") != tc.ce || !bytes.Equal(b, tc.body) {
			t.Errorf("%s: %d Content-Encoding %q, %d bytes; want %d %q %d", tc.path, resp.StatusCode,
				resp.Header.Get("Content-Encoding"), len(b), tc.status, tc.ce, len(tc.body))
		}
	}
	// curl --compressed through the proxy.
	curl := testenv.Command(t, "curl")
	out, err := exec.Command(curl, "-s", "--compressed", "http://"+addr+"/chunked").Output()
	if err != nil || !bytes.Equal(out, doc) {
		t.Errorf("curl --compressed: %d bytes (%v), want %d", len(out), err, len(doc))
	}
}

// TestCompressProxyStreamBounded: a 32 MiB proxied answer is compressed
// as it streams: the client decodes all of it while the heap stays far
// below the body's size.
func TestCompressProxyStreamBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	testenv.CheckGoroutines(t)
	const size = 32 << 20
	chunk := apiJSON(64 << 10)
	want := sha256.New()
	for n := 0; n < size; n += len(chunk) {
		want.Write(chunk[:min(len(chunk), size-n)])
	}
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/length" {
			w.Header().Set("Content-Length", strconv.Itoa(size))
		}
		for n := 0; n < size; n += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), size-n)]); err != nil {
				return
			}
		}
	}))
	addr := startCompressProxy(t, o, "gzip", "zstd")
	c := client(t)
	c.Transport.(*http.Transport).DisableCompression = true
	c.Timeout = 5 * time.Minute
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stopSampling := sampleHeapPeak(10 * time.Millisecond)
	for _, tc := range []struct{ path, coding string }{{"/length", "gzip"}, {"/chunked", "gzip"}, {"/length", "zstd"}} {
		req, _ := http.NewRequest("GET", "http://"+addr+tc.path, nil)
		req.Header.Set("Accept-Encoding", tc.coding)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("Content-Encoding") != tc.coding {
			t.Fatalf("%s: Content-Encoding %q", tc.path, resp.Header.Get("Content-Encoding"))
		}
		var wire countingReader
		wire.r = resp.Body
		h := sha256.New()
		n, err := io.Copy(h, decodeBody(t, tc.coding, &wire))
		resp.Body.Close()
		if err != nil || n != size || !bytes.Equal(h.Sum(nil), want.Sum(nil)) {
			t.Fatalf("%s %s: decoded %d bytes (%v), want %d identical", tc.path, tc.coding, n, err, size)
		}
		if wire.n > size/4 {
			t.Errorf("%s %s: %d bytes on the wire for %d", tc.path, tc.coding, wire.n, size)
		}
	}
	peak := stopSampling()
	// The body is 32 MiB; compressing it whole would hold at least that.
	const bound = 24 << 20
	t.Logf("heap in use peaked %d MiB above the start", (peak-min(peak, base.HeapInuse))>>20)
	if peak > base.HeapInuse+bound {
		t.Errorf("heap in use peaked %d MiB above the start moving %d MiB; want < %d MiB", (peak-base.HeapInuse)>>20, size>>20, bound>>20)
	}
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestCompressProxyNotModified: a compressing proxy route's 304 carries
// the Vary and ETag its 200 carried (issue 27): the upstream's strong
// tag made weak for a client that gets the body compressed, on both
// proxy paths; the upstream's 304 has neither a type nor a length, so the
// edge takes the 200 as compressible.
func TestCompressProxyNotModified(t *testing.T) {
	testenv.CheckGoroutines(t)
	body := apiJSON(8 << 10)
	o := startOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if inm := r.Header.Get("If-None-Match"); inm == `"v1"` || inm == `W/"v1"` {
			w.WriteHeader(304)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	addr := startCompressProxy(t, o, "gzip")
	c := &http.Client{Timeout: testTimeout, Transport: &http.Transport{DisableCompression: true}}
	defer c.CloseIdleConnections()
	for _, ae := range []string{"gzip", "identity"} {
		wantTag := `W/"v1"`
		if ae == "identity" {
			wantTag = `"v1"`
		}
		for _, inm := range []string{"", `W/"v1"`, `"v1"`} {
			req, _ := http.NewRequest("GET", "http://"+addr+"/", nil)
			req.Header.Set("Accept-Encoding", ae)
			if inm != "" {
				req.Header.Set("If-None-Match", inm)
			}
			resp, b := get(t, c, req)
			want := 200
			if inm != "" {
				want = 304
			}
			if resp.StatusCode != want || resp.Header.Get("ETag") != wantTag || resp.Header.Get("Vary") != "Accept-Encoding" ||
				want == 304 && (len(b) != 0 || resp.Header.Get("Content-Encoding") != "") {
				t.Errorf("%s If-None-Match %q: %d ETag %q Vary %q Content-Encoding %q; want %d ETag %q Vary Accept-Encoding",
					ae, inm, resp.StatusCode, resp.Header.Get("ETag"), resp.Header.Get("Vary"), resp.Header.Get("Content-Encoding"), want, wantTag)
			}
		}
	}
}
