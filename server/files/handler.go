package files

import (
	"errors"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"github.com/simdedge/simdedge/server"
)

// Options configure a files handler.
type Options struct {
	// Root is the directory served.
	Root string
	// Index is the file served for a directory; default DefaultIndex.
	Index string
	// FollowSymlinks lets symlinks lead out of Root.
	FollowSymlinks bool
}

// DefaultIndex is nginx's and Caddy's index file name.
const DefaultIndex = "index.html"

// InlineMax is the largest file the event loop copies through the process
// in one turn (TLS, compression): 64 KiB costs about what a proxied
// request does to seal, and a few hundred microseconds to compress;
// beyond it such files go to the goroutine path. Plain files of any size
// stay on the loop (sendfile, 1 MiB per turn).
const InlineMax = 64 << 10

// tagBuf holds an entity tag: two quotes, a dash and two int64 in hex.
const tagBuf = 40

var (
	ErrRoot  = errors.New("files: root is not a directory")
	ErrIndex = errors.New("files: index must be a file name")
)

// Handler serves files under a root. It implements server.Handler and
// server.Inliner and is safe for concurrent use.
type Handler struct {
	root   *os.Root // nil with FollowSymlinks
	dir    string
	index  string
	follow bool
}

// New opens the root and returns its Handler. The root's descriptor is
// closed when the Handler is garbage (a reload drops the old one).
func New(o Options) (*Handler, error) {
	st, err := os.Stat(o.Root)
	if err != nil || !st.IsDir() {
		return nil, ErrRoot
	}
	h := &Handler{dir: o.Root, index: o.Index, follow: o.FollowSymlinks}
	if h.index == "" {
		h.index = DefaultIndex
	}
	if h.index == "." || h.index == ".." || filepath.Base(h.index) != h.index {
		return nil, ErrIndex
	}
	if !h.follow {
		r, err := os.OpenRoot(o.Root)
		if err != nil {
			return nil, ErrRoot
		}
		h.root = r
		runtime.AddCleanup(h, func(r *os.Root) { r.Close() }, r)
	}
	return h, nil
}

// open opens rel (from Resolve) for reading. O_NONBLOCK: opening a FIFO
// must not wait for a writer (it is refused afterwards as not regular).
func (h *Handler) open(rel string) (*os.File, error) {
	const flags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if h.root != nil {
		return h.root.OpenFile(rel, flags, 0)
	}
	return os.OpenFile(filepath.Join(h.dir, rel), flags, 0)
}

func (h *Handler) stat(rel string) (fs.FileInfo, error) {
	if h.root != nil {
		return h.root.Stat(rel)
	}
	return os.Stat(filepath.Join(h.dir, rel))
}

// target splits the request target into path and query (absolute form
// reduced to its path).
func target(t []byte) (p, query []byte) {
	if len(t) > 0 && t[0] != '/' {
		for i := 0; i+2 < len(t); i++ {
			if t[i] == ':' && t[i+1] == '/' && t[i+2] == '/' {
				t = t[i+3:]
				j := 0
				for j < len(t) && t[j] != '/' && t[j] != '?' {
					j++
				}
				t = t[j:]
				break
			}
		}
	}
	for i, c := range t {
		if c == '?' {
			return t[:i], t[i:]
		}
		if c == '#' {
			return t[:i], nil
		}
	}
	return t, nil
}

func getMethodOK(m []byte) bool { return string(m) == "GET" || string(m) == "HEAD" }

// InlineHandler implements server.Inliner: the loop answers errors,
// redirects and files, sending the body with sendfile(2) (a file's
// duplicate descriptor, after the head: server/loopsendfile_linux.go). A
// file larger than InlineMax goes to a goroutine when its bytes would
// have to pass through the process: over TLS (sealed in the process) or
// on a compressing route (the encoder reads them), where a loop turn
// would otherwise compress or seal the whole file.
func (h *Handler) InlineHandler(r *server.Request) server.Handler {
	if !getMethodOK(r.Method()) {
		return h
	}
	p, _ := target(r.Target())
	rel, dir, err := Resolve(p)
	if err != nil {
		return h
	}
	st, err := h.stat(rel)
	if err != nil {
		return h // 403/404, answered at once
	}
	if st.IsDir() {
		if !dir {
			return h // the redirect
		}
		if st, err = h.stat(path.Join(rel, h.index)); err != nil {
			return h
		}
	}
	if st.Size() > InlineMax && (r.TLS() || r.Compression() != nil) {
		return nil
	}
	return h
}

// ServeEdge implements server.Handler.
func (h *Handler) ServeEdge(w *server.ResponseWriter, r *server.Request) {
	if !getMethodOK(r.Method()) {
		w.AddHeader("Allow", "GET, HEAD")
		plain(w, 405, "method not allowed\n")
		return
	}
	p, query := target(r.Target())
	rel, dir, err := Resolve(p)
	if err != nil {
		plain(w, 400, "bad request\n")
		return
	}
	f, err := h.open(rel)
	if err != nil {
		fail(w, err)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		fail(w, err)
		return
	}
	name := rel
	if st.IsDir() {
		if !dir {
			// nginx's answer: the directory with its slash, so that
			// relative links in its index resolve below it.
			loc := (&url.URL{Path: "/" + rel + "/"}).EscapedPath()
			w.AddHeader("Location", loc+string(query))
			plain(w, 301, "moved permanently\n")
			return
		}
		name = path.Join(rel, h.index)
		f.Close()
		if f, err = h.open(name); err != nil {
			fail(w, err)
			return
		}
		defer f.Close()
		if st, err = f.Stat(); err != nil {
			fail(w, err)
			return
		}
	}
	// A regular file named as a directory ("file/", "file/.") is not
	// there, as on nginx and in the file system (ENOTDIR): serving it
	// would give one file many names for caches and for rules matching
	// the path.
	if !st.Mode().IsRegular() || dir && name == rel {
		plain(w, 404, "not found\n")
		return
	}
	h.serveFile(w, r, f, name, st)
}

func (h *Handler) serveFile(w *server.ResponseWriter, r *server.Request, f *os.File, name string, st fs.FileInfo) {
	size, mtime := st.Size(), st.ModTime()
	var tb [tagBuf]byte
	tag := etag(tb[:0], mtime, size)
	var lb [len(time.RFC1123)]byte
	lastMod := mtime.UTC().AppendFormat(lb[:0], "Mon, 02 Jan 2006 15:04:05 GMT")
	w.AddHeaderBytes([]byte("ETag"), tag)
	w.AddHeaderBytes([]byte("Last-Modified"), lastMod)
	get := r.Header
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	switch evaluate(get, tag, mtime) {
	case condNotModified:
		// A compressing route gives the 304 the 200's Vary and
		// (weak) ETag, judged by the type and size.
		w.SetSelected(ct, size)
		w.WriteHeader(304)
		return
	case condFailed:
		plain(w, 412, "precondition failed\n")
		return
	}
	w.AddHeader("Accept-Ranges", "bytes")
	start, n := int64(0), size
	if v, ok := get("Range"); ok && string(r.Method()) == "GET" && ifRangeHolds(get, tag, mtime) {
		kind, s, l := parseRange(v, size)
		switch kind {
		case rangeUnsatisfiable:
			w.AddHeader("Content-Range", "bytes */"+strconv.FormatInt(size, 10))
			plain(w, 416, "range not satisfiable\n")
			return
		case rangeOne:
			start, n = s, l
			w.AddHeader("Content-Range", "bytes "+strconv.FormatInt(s, 10)+"-"+
				strconv.FormatInt(s+l-1, 10)+"/"+strconv.FormatInt(size, 10))
			w.WriteHeader(206)
		}
	}
	w.AddHeader("Content-Type", ct)
	w.SendFile(f, start, n)
}

// fail answers an open or stat error: 403 for permissions, 404 for
// everything else (missing, not a directory, a symlink out of the root,
// too many links), which tells a client nothing about what lies outside.
func fail(w *server.ResponseWriter, err error) {
	if errors.Is(err, fs.ErrPermission) {
		plain(w, 403, "forbidden\n")
		return
	}
	plain(w, 404, "not found\n")
}

func plain(w *server.ResponseWriter, status int, body string) {
	w.AddHeader("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	w.WriteString(body)
}

var (
	_ server.Handler = (*Handler)(nil)
	_ server.Inliner = (*Handler)(nil)
)
