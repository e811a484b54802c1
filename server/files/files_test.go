package files_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/simdedge/simdedge/internal/testenv"
	"github.com/simdedge/simdedge/internal/testnet"
)

func client(t *testing.T) *http.Client {
	// Compression off: the transport must not ask for gzip on its own.
	c := &http.Client{Timeout: testTimeout, Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// do sends a request with extra fields and returns the response and body.
func do(t *testing.T, c *http.Client, method, url string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
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
	return resp, b
}

// raw sends a request byte for byte (clients normalize paths) and reads
// one response.
func raw(t *testing.T, addr, req string) (*http.Response, []byte) {
	t.Helper()
	c := testnet.Dial(t, addr, testTimeout)
	defer c.Close() // closed on return: callers make many
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestFilesGetHead(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	addr := serve(t, tr)
	c := client(t)
	base := "http://" + addr
	resp, b := do(t, c, "GET", base+"/small.txt")
	if resp.StatusCode != 200 || string(b) != "0123456789abcdefghijklmnopqrstuvwxyz\n" {
		t.Fatalf("GET: %d %q", resp.StatusCode, b)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if resp.Header.Get("Accept-Ranges") != "bytes" || !strings.HasPrefix(resp.Header.Get("ETag"), `"`) {
		t.Errorf("Accept-Ranges %q ETag %q", resp.Header.Get("Accept-Ranges"), resp.Header.Get("ETag"))
	}
	if lm, err := http.ParseTime(resp.Header.Get("Last-Modified")); err != nil || !lm.Equal(tr.mtime.Truncate(time.Second)) {
		t.Errorf("Last-Modified %q (%v), want %v", resp.Header.Get("Last-Modified"), err, tr.mtime)
	}
	resp, b = do(t, c, "HEAD", base+"/small.txt")
	if resp.StatusCode != 200 || len(b) != 0 || resp.ContentLength != 37 {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %d", resp.StatusCode, len(b), resp.ContentLength)
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
		resp, _ = do(t, c, m, base+"/small.txt")
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d Allow %q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	resp, b = do(t, c, "GET", base+"/data.json")
	if resp.StatusCode != 200 || !bytes.Equal(b, tr.json) || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("data.json: %d, %d bytes, %q", resp.StatusCode, len(b), resp.Header.Get("Content-Type"))
	}
	// Larger than InlineMax: the loop hands it to a goroutine, where
	// sendfile sends it; twice on one connection (keep-alive after it).
	for i := range 2 {
		resp, b = do(t, c, "GET", base+"/big.bin")
		if resp.StatusCode != 200 || !bytes.Equal(b, tr.big) || resp.Header.Get("Content-Type") != "application/octet-stream" {
			t.Errorf("big.bin %d: %d, %d bytes of %d, %q", i, resp.StatusCode, len(b), len(tr.big), resp.Header.Get("Content-Type"))
		}
	}
	resp, _ = do(t, c, "GET", base+"/missing.txt")
	if resp.StatusCode != 404 {
		t.Errorf("missing: %d", resp.StatusCode)
	}
	// A FIFO is opened without waiting for a writer and refused.
	resp, _ = do(t, c, "GET", base+"/fifo")
	if resp.StatusCode != 404 {
		t.Errorf("fifo: %d", resp.StatusCode)
	}
	resp, b = do(t, c, "GET", base+"/link-in")
	if resp.StatusCode != 200 || string(b) != "0123456789abcdefghijklmnopqrstuvwxyz\n" {
		t.Errorf("symlink inside the root: %d %q", resp.StatusCode, b)
	}
}

func TestFilesIndexRedirect(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	base := "http://" + serve(t, tr)
	c := client(t)
	for _, tc := range []struct {
		path, loc string
		status    int
		body      string
	}{
		{"/", "", 200, "<h1>root</h1>\n"},
		{"/sub/", "", 200, "<h1>sub</h1>\n"},
		{"/sub", "/sub/", 301, ""},
		{"/sub?x=1&y=2", "/sub/?x=1&y=2", 301, ""},
		{"/empty/", "", 404, ""},
		{"/index.html", "", 200, "<h1>root</h1>\n"},
	} {
		resp, b := do(t, c, "GET", base+tc.path)
		if resp.StatusCode != tc.status || resp.Header.Get("Location") != tc.loc || tc.body != "" && string(b) != tc.body {
			t.Errorf("%s: %d Location %q body %q; want %d %q %q", tc.path, resp.StatusCode, resp.Header.Get("Location"), b, tc.status, tc.loc, tc.body)
		}
	}
	// "//evil.example" must not become a protocol-relative redirect.
	resp, _ := raw(t, strings.TrimPrefix(base, "http://"), "GET //sub HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	if loc := resp.Header.Get("Location"); resp.StatusCode != 301 || loc != "/sub/" {
		t.Errorf("//sub: %d Location %q, want 301 /sub/", resp.StatusCode, loc)
	}
}

func TestFilesConditional(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	base := "http://" + serve(t, tr)
	c := client(t)
	url := base + "/small.txt"
	resp, _ := do(t, c, "GET", url)
	tag := resp.Header.Get("ETag")
	lm := resp.Header.Get("Last-Modified")
	past := tr.mtime.Add(-time.Hour).UTC().Format(http.TimeFormat)
	future := tr.mtime.Add(time.Hour).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name   string
		hdr    []string
		status int
	}{
		{"If-None-Match same", []string{"If-None-Match", tag}, 304},
		{"If-None-Match weak same", []string{"If-None-Match", "W/" + tag}, 304},
		{"If-None-Match in list", []string{"If-None-Match", `"x", ` + tag}, 304},
		{"If-None-Match star", []string{"If-None-Match", "*"}, 304},
		{"If-None-Match other", []string{"If-None-Match", `"other"`}, 200},
		{"If-Modified-Since equal", []string{"If-Modified-Since", lm}, 304},
		{"If-Modified-Since future", []string{"If-Modified-Since", future}, 304},
		{"If-Modified-Since past", []string{"If-Modified-Since", past}, 200},
		{"If-Modified-Since garbage", []string{"If-Modified-Since", "yesterday"}, 200},
		{"If-None-Match wins over If-Modified-Since", []string{"If-None-Match", `"other"`, "If-Modified-Since", future}, 200},
		{"If-Match same", []string{"If-Match", tag}, 200},
		{"If-Match weak", []string{"If-Match", "W/" + tag}, 412},
		{"If-Match other", []string{"If-Match", `"other"`}, 412},
		{"If-Unmodified-Since past", []string{"If-Unmodified-Since", past}, 412},
		{"If-Unmodified-Since future", []string{"If-Unmodified-Since", future}, 200},
	} {
		resp, b := do(t, c, "GET", url, tc.hdr...)
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
		if tc.status == 304 && (len(b) != 0 || resp.Header.Get("ETag") != tag || resp.Header.Get("Content-Length") != "") {
			t.Errorf("%s: 304 with body %q ETag %q Content-Length %q", tc.name, b, resp.Header.Get("ETag"), resp.Header.Get("Content-Length"))
		}
		// HEAD follows the same rules.
		resp, _ = do(t, c, "HEAD", url, tc.hdr...)
		if resp.StatusCode != tc.status {
			t.Errorf("HEAD %s: %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
	}
}

func TestFilesRange(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	base := "http://" + serve(t, tr)
	c := client(t)
	small := "0123456789abcdefghijklmnopqrstuvwxyz\n"
	resp, _ := do(t, c, "GET", base+"/small.txt")
	tag := resp.Header.Get("ETag")
	lm := resp.Header.Get("Last-Modified")
	n := len(small)
	for _, tc := range []struct {
		name, path string
		hdr        []string
		status     int
		cr         string // Content-Range
		body       string // "" = the whole file
	}{
		{"first ten", "/small.txt", []string{"Range", "bytes=0-9"}, 206, fmt.Sprintf("bytes 0-9/%d", n), "0123456789"},
		{"suffix", "/small.txt", []string{"Range", "bytes=-5"}, 206, fmt.Sprintf("bytes %d-%d/%d", n-5, n-1, n), small[n-5:]},
		{"open end", "/small.txt", []string{"Range", "bytes=30-"}, 206, fmt.Sprintf("bytes 30-%d/%d", n-1, n), small[30:]},
		{"end clamped", "/small.txt", []string{"Range", "bytes=35-1000"}, 206, fmt.Sprintf("bytes 35-%d/%d", n-1, n), small[35:]},
		{"suffix longer than file", "/small.txt", []string{"Range", "bytes=-1000"}, 206, fmt.Sprintf("bytes 0-%d/%d", n-1, n), small},
		{"unsatisfiable", "/small.txt", []string{"Range", "bytes=1000-"}, 416, fmt.Sprintf("bytes */%d", n), "-"},
		{"zero suffix", "/small.txt", []string{"Range", "bytes=-0"}, 416, fmt.Sprintf("bytes */%d", n), "-"},
		{"several ranges: whole file", "/small.txt", []string{"Range", "bytes=0-1,5-6"}, 200, "", small},
		{"reversed: ignored", "/small.txt", []string{"Range", "bytes=5-3"}, 200, "", small},
		{"other unit: ignored", "/small.txt", []string{"Range", "items=0-3"}, 200, "", small},
		{"If-Range tag holds", "/small.txt", []string{"Range", "bytes=0-3", "If-Range", tag}, 206, fmt.Sprintf("bytes 0-3/%d", n), "0123"},
		{"If-Range tag stale", "/small.txt", []string{"Range", "bytes=0-3", "If-Range", `"stale"`}, 200, "", small},
		{"If-Range weak never", "/small.txt", []string{"Range", "bytes=0-3", "If-Range", "W/" + tag}, 200, "", small},
		{"If-Range date holds", "/small.txt", []string{"Range", "bytes=0-3", "If-Range", lm}, 206, fmt.Sprintf("bytes 0-3/%d", n), "0123"},
		{"If-Range date stale", "/small.txt", []string{"Range", "bytes=0-3", "If-Range", tr.mtime.Add(-time.Hour).UTC().Format(http.TimeFormat)}, 200, "", small},
		{"big file middle (sendfile)", "/big.bin", []string{"Range", "bytes=1000000-2999999"}, 206, fmt.Sprintf("bytes 1000000-2999999/%d", len(tr.big)), string(tr.big[1000000:3000000])},
		{"big file tail", "/big.bin", []string{"Range", "bytes=-100"}, 206, fmt.Sprintf("bytes %d-%d/%d", len(tr.big)-100, len(tr.big)-1, len(tr.big)), string(tr.big[len(tr.big)-100:])},
		{"304 before Range", "/small.txt", []string{"Range", "bytes=0-3", "If-None-Match", tag}, 304, "", "-"},
	} {
		resp, b := do(t, c, "GET", base+tc.path, tc.hdr...)
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Range") != tc.cr {
			t.Errorf("%s: %d Content-Range %q; want %d %q", tc.name, resp.StatusCode, resp.Header.Get("Content-Range"), tc.status, tc.cr)
			continue
		}
		if tc.body != "-" && string(b) != tc.body && !(tc.body == "" && len(b) == n) {
			t.Errorf("%s: body of %d bytes differs", tc.name, len(b))
		}
	}
}

// TestFilesEscapes sends traversal attempts byte for byte: each is
// refused with 400, 403 or 404 and no answer carries the secret outside
// the root; with follow_symlinks the symlinks that lead out are followed
// (and ".." still refused).
func TestFilesEscapes(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	addr := serve(t, tr)
	for _, p := range []string{
		"/../outside/secret.txt",
		"/..%2foutside%2fsecret.txt",
		"/%2e%2e/outside/secret.txt",
		"/%2E%2E/outside/secret.txt",
		"/.%2e/outside/secret.txt",
		"/sub/../../outside/secret.txt",
		"/sub/%2e%2e/%2e%2e/outside/secret.txt",
		"/..\\outside\\secret.txt",
		"/%5c..%5coutside%5csecret.txt",
		"/small.txt%00.html",
		"/%00",
		"/%zz",
		"/%2",
		"/link-out",
		"/dir-out/secret.txt",
		"/dir-out/",
		"/dir-out",
		"/sub/..%2f..%2foutside/secret.txt",
		"http://x/../outside/secret.txt",
	} {
		for _, host := range []string{"x", "follow.test"} {
			resp, b := raw(t, addr, "GET "+p+" HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n")
			follow := host == "follow.test" && (p == "/link-out" || p == "/dir-out/secret.txt")
			if follow {
				if resp.StatusCode != 200 || string(b) != secret {
					t.Errorf("%s with follow_symlinks: %d %q", p, resp.StatusCode, b)
				}
				continue
			}
			if s := resp.StatusCode; s != 400 && s != 403 && s != 404 && !(s == 301 && p == "/dir-out") {
				t.Errorf("%s (host %s): status %d", p, host, s)
			}
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s (host %s): the secret leaked", p, host)
			}
		}
	}
	// curl with --path-as-is sends the dots as they are.
	curl := testenv.Command(t, "curl")
	for _, p := range []string{"/../outside/secret.txt", "/%2e%2e/outside/secret.txt", "/link-out"} {
		out, err := exec.Command(curl, "-s", "--path-as-is", "-w", "\n%{http_code}", "http://"+addr+p).CombinedOutput()
		if err != nil {
			t.Fatalf("curl %s: %v %s", p, err, out)
		}
		if bytes.Contains(out, []byte(secret)) || !(bytes.HasSuffix(out, []byte("400")) || bytes.HasSuffix(out, []byte("404"))) {
			t.Errorf("curl %s: %q", p, out)
		}
	}
}

// TestFilesFileAsDirectory: a regular file named as a directory, with a
// trailing slash or "." segment, is not found, as on nginx (issue 27);
// a directory named so still serves its index.
func TestFilesFileAsDirectory(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	addr := serve(t, tr)
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"/small.txt/", 404},
		{"/small.txt/.", 404},
		{"/small.txt/%2e", 404},
		{"/small.txt//", 404},
		{"/link-in/", 404},
		{"/c/small.json/", 404},
		{"/small.txt", 200},
		{"/sub/.", 200},
		{"/sub/./", 200},
	} {
		resp, b := raw(t, addr, "GET "+tc.path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		if resp.StatusCode != tc.status {
			t.Errorf("%s: %d %q, want %d", tc.path, resp.StatusCode, b, tc.status)
		}
	}
}
