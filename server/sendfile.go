package server

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// Zero-copy file bodies (static files, issue 23). On the goroutine engine
// a plain kernel TCP connection is a *net.TCPConn, whose ReadFrom hands a
// *os.File behind an io.LimitedReader to sendfile(2): the file's pages go
// from the page cache to the socket without entering the process. On the
// event loop a plain connection records the file (a duplicate of its
// descriptor, the offset and the length) after the head, and the loop
// sends it with sendfile(2) on the non-blocking socket once the head is
// out (loopsendfile_linux.go). Every other case copies through the
// ResponseWriter: TLS connections (this kernel has no kTLS, so records
// are sealed in the process), compressed responses (the encoder must read
// the bytes) and message transports.

// sendfileChunk is how much one sendfile call may send before the write
// deadline is moved: the Write timeout bounds each chunk, as it bounds each
// flush of a streamed body, not the whole file (a slow reader takes 256 KiB
// within the timeout far more surely than megabytes).
const sendfileChunk = 256 << 10

// copyChunk is the buffer a copied file body goes through.
const copyChunk = 32 << 10

var copyBufs = sync.Pool{New: func() any { return new([copyChunk]byte) }}

// fileOut is a file body waiting for the event loop to send it: a
// descriptor of its own (a duplicate, closed when sent or when the
// connection closes), where it is and how much is left.
type fileOut struct {
	fd     int
	off, n int64
}

// ErrFileShort is returned by SendFile when the file ended before n bytes
// (it shrank while being sent); the connection is closed.
var ErrFileShort = errors.New("server: file shorter than its declared length")

// SendFile writes n bytes of f from offset off as the body: the length is
// declared (SetContentLength) and, when the connection allows, the bytes
// go with sendfile(2). It may be called once, instead of Write, after the
// status and fields are set.
func (w *ResponseWriter) SendFile(f *os.File, off, n int64) error {
	w.SetContentLength(n)
	if w.status == 0 {
		w.status = 200
	}
	if w.coding == codingUndecided && !w.committed {
		w.decide(false)
	}
	if !w.bodyAllowed() {
		return nil // HEAD: the fields are all there is
	}
	if c, ok := w.sink.(*conn); ok && w.coding != codingOn && !w.aborted && w.err == nil && n > 0 {
		if _, isTLS := c.st.(tlsConnStream); !isTLS {
			if c.inLoop {
				// A small body goes out with its head in one
				// write: cheaper than the duplicate descriptor
				// and the sendfile call.
				if n > copyChunk && c.file.n == 0 && loopSendfile(c, f, off, n) {
					w.commit(false)
					w.written += n
					return nil
				}
			} else if tc, ok := c.st.(*net.TCPConn); ok {
				return w.sendfile(c, tc, f, off, n)
			}
		}
	}
	return w.copyFile(f, off, n)
}

// copyFile writes the file's bytes through Write.
func (w *ResponseWriter) copyFile(f *os.File, off, n int64) error {
	buf := copyBufs.Get().(*[copyChunk]byte)
	defer copyBufs.Put(buf)
	for n > 0 {
		k, err := f.ReadAt(buf[:min(n, copyChunk)], off)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return werr
			}
			off, n = off+int64(k), n-int64(k)
		}
		if n > 0 && err != nil {
			w.Abort()
			if err == io.EOF {
				return ErrFileShort
			}
			return err
		}
	}
	return nil
}

// sendfile commits the head, sends it, and lets the kernel send the body.
func (w *ResponseWriter) sendfile(c *conn, tc *net.TCPConn, f *os.File, off, n int64) error {
	w.commit(false)
	if err := c.flush(); err != nil {
		w.err = err
		return err
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		w.Abort()
		return err
	}
	lr := &io.LimitedReader{R: f}
	for n > 0 {
		if d := c.cfg.Timeouts.Write; d > 0 {
			tc.SetWriteDeadline(time.Now().Add(d))
			c.writeDL = time.Time{} // the next flush sets its own
		}
		lr.N = min(n, sendfileChunk)
		k, err := tc.ReadFrom(lr)
		w.written += k
		n -= k
		if err != nil {
			c.broken = true
			w.err = err
			return err
		}
		if k == 0 {
			w.Abort()
			return ErrFileShort
		}
	}
	return nil
}
