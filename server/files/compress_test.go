package files_test

import (
	"bytes"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/simdedge/simdedge/internal/testenv"
)

// decode undoes a content coding with the reference decoders.
func decode(t *testing.T, coding string, b []byte) []byte {
	t.Helper()
	var r io.Reader
	switch coding {
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("gzip: %v", err)
		}
		r = zr
	case "br":
		r = brotli.NewReader(bytes.NewReader(b))
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("zstd: %v", err)
		}
		defer zr.Close()
		r = zr
	case "":
		return b
	default:
		t.Fatalf("unexpected coding %q", coding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%s: %v", coding, err)
	}
	return out
}

// TestCompressActions: respond, echo and files routes compress with the
// coding the client prefers; the decoded bytes are the original.
func TestCompressActions(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	base := "http://" + serve(t, tr)
	c := client(t)
	for _, tc := range []struct {
		ae, want string
	}{
		{"gzip", "gzip"},
		{"br", "br"},
		{"zstd", "zstd"},
		{"gzip, br, zstd", "zstd"},                 // ties: the configured order (zstd, br, gzip)
		{"gzip;q=1, br;q=0.9, zstd;q=0.5", "gzip"}, // the client's qvalues first
		{"br;q=0.8, gzip;q=0.8", "br"},
		{"*", "zstd"},
		{"*;q=0.5, gzip", "gzip"},
		{"*, zstd;q=0, br;q=0", "gzip"},
		{"gzip;q=0", ""},
		{"identity", ""},
		{"deflate", ""},
		{"", ""},
		{"GZIP", "gzip"},
		{"x-gzip", "gzip"},
		{"gzip;q=0.001", "gzip"},
		{"gzip;q=2", ""}, // malformed element: skipped
	} {
		for _, path := range []string{"/c/data.json", "/c/big.json", "/r/big"} {
			hdr := []string{}
			if tc.ae != "" {
				hdr = []string{"Accept-Encoding", tc.ae}
			}
			resp, b := do(t, c, "GET", base+path, hdr...)
			got := resp.Header.Get("Content-Encoding")
			if resp.StatusCode != 200 || got != tc.want {
				t.Errorf("%s Accept-Encoding %q: %d Content-Encoding %q, want %q", path, tc.ae, resp.StatusCode, got, tc.want)
				continue
			}
			if v := resp.Header.Get("Vary"); v != "Accept-Encoding" {
				t.Errorf("%s %q: Vary %q", path, tc.ae, v)
			}
			plain := decode(t, got, b)
			want := tr.json
			if path == "/c/big.json" {
				want = jsonDoc(len(plain))
				if len(plain) != 3*64<<10 {
					t.Errorf("%s: %d bytes decoded", path, len(plain))
				}
			}
			if !bytes.Equal(plain, want) {
				t.Errorf("%s %q: decoded body differs (%d bytes, want %d)", path, tc.ae, len(plain), len(want))
			}
			if got != "" && len(b) >= len(plain)/2 {
				t.Errorf("%s %q: %d compressed bytes for %d", path, tc.ae, len(b), len(plain))
			}
			if et := resp.Header.Get("ETag"); strings.HasPrefix(path, "/c/") && got != "" && !strings.HasPrefix(et, `W/"`) {
				t.Errorf("%s %q: compressed response with strong ETag %q", path, tc.ae, et)
			}
		}
	}
	// Echo: the JSON is built on the loop; long enough with a big field.
	req, _ := http.NewRequest("GET", base+"/r/echo", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	req.Header.Set("X-Pad", strings.Repeat("abcdefgh", 300))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" || !bytes.Contains(decode(t, "gzip", b), []byte(strings.Repeat("abcdefgh", 300))) {
		t.Errorf("echo: Content-Encoding %q", resp.Header.Get("Content-Encoding"))
	}
}

// TestCompressNotApplied: below min_length, types not listed, 204, 304,
// Range/206 and HEAD (headers only) are not compressed.
func TestCompressNotApplied(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	base := "http://" + serve(t, tr)
	c := client(t)
	ae := []string{"Accept-Encoding", "gzip"}
	resp, b := do(t, c, "GET", base+"/r/small", ae...)
	if resp.Header.Get("Content-Encoding") != "" || string(b) != `{"small":true}` || resp.Header.Get("Vary") != "" {
		t.Errorf("below min_length: %q %q Vary %q", resp.Header.Get("Content-Encoding"), b, resp.Header.Get("Vary"))
	}
	resp, b = do(t, c, "GET", base+"/c/small.json", ae...)
	if resp.Header.Get("Content-Encoding") != "" || string(b) != `{"a":1}` {
		t.Errorf("small file: %q %q", resp.Header.Get("Content-Encoding"), b)
	}
	resp, _ = do(t, c, "GET", base+"/r/nocontent", ae...)
	if resp.StatusCode != 204 || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("204: %d %q", resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	resp, b = do(t, c, "GET", base+"/c/data.json", "Accept-Encoding", "gzip", "Range", "bytes=10-19")
	if resp.StatusCode != 206 || resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, tr.json[10:20]) {
		t.Errorf("range: %d %q %q", resp.StatusCode, resp.Header.Get("Content-Encoding"), b)
	}
	resp, _ = do(t, c, "GET", base+"/c/data.json", ae...)
	tag := resp.Header.Get("ETag")
	resp, b = do(t, c, "GET", base+"/c/data.json", "Accept-Encoding", "gzip", "If-None-Match", tag)
	if resp.StatusCode != 304 || len(b) != 0 || resp.Header.Get("Content-Encoding") != "" {
		t.Errorf("304 for the weak tag %s: %d %q", tag, resp.StatusCode, resp.Header.Get("Content-Encoding"))
	}
	resp, b = do(t, c, "HEAD", base+"/c/data.json", ae...)
	if resp.StatusCode != 200 || len(b) != 0 || resp.Header.Get("Content-Encoding") != "gzip" || resp.ContentLength != -1 {
		t.Errorf("HEAD: %d %q Content-Length %d", resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.ContentLength)
	}
	// Not a listed type: a binary file.
	resp, b = do(t, c, "GET", base+"/big.bin", ae...)
	if resp.Header.Get("Content-Encoding") != "" || !bytes.Equal(b, tr.big) {
		t.Errorf("octet-stream: %q", resp.Header.Get("Content-Encoding"))
	}
}

// TestCompressCurl: curl --compressed decodes what it asked for, with each
// coding this curl was built with.
func TestCompressCurl(t *testing.T) {
	testenv.CheckGoroutines(t)
	curl := testenv.Command(t, "curl")
	v, err := exec.Command(curl, "-V").Output()
	if err != nil {
		t.Fatal(err)
	}
	tr := makeTree(t)
	base := "http://" + serve(t, tr)
	for _, coding := range []string{"gzip", "br", "zstd"} {
		lib := map[string]string{"gzip": "zlib", "br": "brotli", "zstd": "zstd"}[coding]
		if !bytes.Contains(bytes.ToLower(v), []byte(strings.ToLower(lib))) {
			t.Logf("curl without %s: %s not tried", lib, coding)
			continue
		}
		for _, path := range []string{"/c/data.json", "/c/big.json", "/r/big"} {
			out, err := exec.Command(curl, "-s", "--compressed", "-H", "Accept-Encoding: "+coding,
				"-D", "-", base+path).Output()
			if err != nil {
				t.Fatalf("curl %s %s: %v", coding, path, err)
			}
			head, body, _ := bytes.Cut(out, []byte("\r\n\r\n"))
			if !bytes.Contains(bytes.ToLower(head), []byte("content-encoding: "+coding)) {
				t.Errorf("curl %s %s: head %q", coding, path, head)
			}
			want := tr.json
			if path == "/c/big.json" {
				want = jsonDoc(3 * 64 << 10)
			}
			if !bytes.Equal(body, want) {
				t.Errorf("curl %s %s: %d bytes decoded, want %d", coding, path, len(body), len(want))
			}
		}
	}
}

// TestCompressNotModifiedFields: a compressing route's 304 carries the
// Vary and the ETag its 200 carried (RFC 9110 §15.4.5, issue 27): the
// weak tag for a client that gets the compressed body, the strong one
// for an identity client; If-None-Match with either form matches. A file
// the route would not compress (below min_length) gets no Vary on
// either answer.
func TestCompressNotModifiedFields(t *testing.T) {
	testenv.CheckGoroutines(t)
	tr := makeTree(t)
	base := "http://" + serve(t, tr)
	c := client(t)
	for _, tc := range []struct {
		path, ae string
		vary     bool
	}{
		{"/c/data.json", "gzip", true},
		{"/c/data.json", "identity", true},
		{"/c/small.json", "gzip", false},
		{"/data.json", "gzip", false}, // not a compressing route
	} {
		ok, b := do(t, c, "GET", base+tc.path, "Accept-Encoding", tc.ae)
		tag, vary := ok.Header.Get("ETag"), ok.Header.Values("Vary")
		if ok.StatusCode != 200 || tag == "" || (len(vary) > 0) != tc.vary || len(b) == 0 {
			t.Errorf("%s %s: 200 answer %d ETag %q Vary %q", tc.path, tc.ae, ok.StatusCode, tag, vary)
			continue
		}
		strong := strings.TrimPrefix(tag, "W/")
		for _, inm := range []string{tag, strong, "W/" + strong} {
			nm, b := do(t, c, "GET", base+tc.path, "Accept-Encoding", tc.ae, "If-None-Match", inm)
			if nm.StatusCode != 304 || len(b) != 0 || nm.Header.Get("Content-Encoding") != "" {
				t.Errorf("%s %s If-None-Match %s: %d %q", tc.path, tc.ae, inm, nm.StatusCode, nm.Header.Get("Content-Encoding"))
				continue
			}
			if got := nm.Header.Get("ETag"); got != tag {
				t.Errorf("%s %s If-None-Match %s: 304 ETag %q, the 200's %q", tc.path, tc.ae, inm, got, tag)
			}
			if got := nm.Header.Values("Vary"); strings.Join(got, ",") != strings.Join(vary, ",") {
				t.Errorf("%s %s If-None-Match %s: 304 Vary %q, the 200's %q", tc.path, tc.ae, inm, got, vary)
			}
		}
	}
}
