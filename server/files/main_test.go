package files_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/simdedge/simdedge/server"
	"github.com/simdedge/simdedge/server/compress"
	"github.com/simdedge/simdedge/server/files"
	"github.com/simdedge/simdedge/server/internal/enginetest"
	"github.com/simdedge/simdedge/server/internal/servetest"
	"github.com/simdedge/simdedge/server/router"
)

// testEngine serves the tests' listeners; TestMain runs the suite once per
// engine (goroutine and loop).
var testEngine = server.EngineGoroutine

func TestMain(m *testing.M) {
	enginetest.Main(m, func(e string) { testEngine = server.Engine(e) })
}

const testTimeout = 20 * time.Second

// secret is what lies outside the root: no answer may contain it.
const secret = "SECRET-OUTSIDE-ROOT"

// tree is a served directory and what it holds.
type tree struct {
	base, root string
	big        []byte // over files.InlineMax: the sendfile/hand-off path
	json       []byte // compressible, over min_length
	mtime      time.Time
}

// gzipTable serves the files under root, gzip-compressed under /c/.
func gzipTable(t *testing.T, root string) *router.Table {
	t.Helper()
	fh, err := files.New(files.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := compress.New(compress.Options{Encodings: []string{"gzip"}})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := router.New([]router.Route{
		{Match: router.Match{PathPrefix: "/c/"}, Handler: router.Compress(fh, pol)},
		{Handler: fh},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// makeTree builds, under a temporary directory:
//
//	outside/secret.txt            never served
//	www/index.html, small.txt, data.json, big.bin
//	www/sub/index.html, www/empty/ (no index)
//	www/c/data.json, www/c/big.json (the compressing route's files)
//	www/link-out -> ../outside/secret.txt, www/dir-out -> ../outside
//	www/link-in -> small.txt, www/fifo
func makeTree(t *testing.T) *tree {
	t.Helper()
	base := t.TempDir()
	tr := &tree{base: base, root: filepath.Join(base, "www")}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(rel string, b []byte) {
		p := filepath.Join(base, rel)
		must(os.MkdirAll(filepath.Dir(p), 0o755))
		must(os.WriteFile(p, b, 0o644))
	}
	tr.big = make([]byte, 3<<20+123)
	for i := range tr.big {
		tr.big[i] = byte(i*7 + i>>9)
	}
	tr.json = jsonDoc(100 << 10)
	write("outside/secret.txt", []byte(secret))
	write("www/index.html", []byte("<h1>root</h1>\n"))
	write("www/small.txt", []byte("0123456789abcdefghijklmnopqrstuvwxyz\n"))
	write("www/data.json", tr.json)
	write("www/big.bin", tr.big)
	write("www/sub/index.html", []byte("<h1>sub</h1>\n"))
	write("www/c/data.json", tr.json)
	write("www/c/big.json", jsonDoc(files.InlineMax*3))
	write("www/c/small.json", []byte(`{"a":1}`))
	must(os.MkdirAll(filepath.Join(tr.root, "empty"), 0o755))
	must(os.Symlink("../outside/secret.txt", filepath.Join(tr.root, "link-out")))
	must(os.Symlink("../outside", filepath.Join(tr.root, "dir-out")))
	must(os.Symlink("small.txt", filepath.Join(tr.root, "link-in")))
	must(syscall.Mkfifo(filepath.Join(tr.root, "fifo"), 0o644))
	st, err := os.Stat(filepath.Join(tr.root, "small.txt"))
	must(err)
	tr.mtime = st.ModTime()
	return tr
}

// jsonDoc is n bytes of JSON-looking text (records with repeated keys, as
// an API answers).
func jsonDoc(n int) []byte {
	b := []byte("[")
	for i := 0; len(b) < n-64; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = append(b, byte('0'+i%10), byte('0'+i/10%10), byte('0'+i/100%10))
		b = append(b, `,"name":"user","active":true,"tags":["a","b"]}`...)
	}
	for len(b) < n-1 {
		b = append(b, ' ')
	}
	return append(b, ']')
}

// serve runs a server on the test engine with: host follow.test -> files
// with follow_symlinks; /c/ -> files compressed (gzip, br, zstd);
// /r/ -> a compressed fixed response; everything else -> files.
func serve(t *testing.T, tr *tree) string {
	t.Helper()
	plain, err := files.New(files.Options{Root: tr.root})
	if err != nil {
		t.Fatal(err)
	}
	follow, err := files.New(files.Options{Root: tr.root, FollowSymlinks: true})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := compress.New(compress.Options{Encodings: []string{"zstd", "br", "gzip"}, MinLength: 1024})
	if err != nil {
		t.Fatal(err)
	}
	tab, err := router.New([]router.Route{
		{Match: router.Match{Host: "follow.test"}, Handler: follow},
		{Match: router.Match{PathPrefix: "/c/"}, Handler: router.Compress(plain, pol)},
		{Match: router.Match{PathPrefix: "/r/big"}, Handler: router.Compress(router.Respond(200, string(tr.json), [][2]string{{"Content-Type", "application/json"}}), pol)},
		{Match: router.Match{PathPrefix: "/r/small"}, Handler: router.Compress(router.Respond(200, `{"small":true}`, [][2]string{{"Content-Type", "application/json"}}), pol)},
		{Match: router.Match{PathPrefix: "/r/echo"}, Handler: router.Compress(router.Echo(), pol)},
		{Match: router.Match{PathPrefix: "/r/nocontent"}, Handler: router.Compress(router.Respond(204, "", [][2]string{{"Content-Type", "application/json"}}), pol)},
		{Handler: plain},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := server.New(server.Options{Handler: router.NewSwitch(tab)})
	addr := servetest.Serve(t, s, testEngine)
	return addr
}
