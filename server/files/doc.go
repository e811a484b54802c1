// Package files serves static files: the `files: {root, index}` route
// action (issue 23).
//
// Paths. The request path is looked up under root whole, as nginx's
// `root` and Caddy's file_server do (not nginx's `alias`): a route
// matching /static/ with root /srv/www serves /static/app.js from
// /srv/www/static/app.js. A route that wants the prefix removed composes
// this with a rewrite's strip_prefix, which runs before the action.
//
// Containment (resolve.go). The path is percent-decoded once; a decoded
// '/', '\', NUL or control byte, a raw '\' or control byte, bad
// percent-encoding and any ".." segment are refused with 400, before the
// file system is asked. What remains is opened through an os.Root
// (Go 1.24+, openat with checks at every component), which refuses to
// leave the root, by ".." or by a symlink that leads out of it: such a
// path answers 404. follow_symlinks: true opens the lexically clean path
// with plain open(2) instead, so symlinks may lead anywhere (the operator
// trusts the tree). Only regular files are served (a FIFO is opened
// non-blocking and refused; devices and sockets too); a directory is
// answered with its index file (301 to add the slash first, as nginx),
// never a listing.
//
// HTTP (RFC 9110). GET and HEAD (others get 405 with Allow); a strong
// ETag from the modification time and size, and Last-Modified; the
// conditionals of §13.2.2 in their order (If-Match, If-Unmodified-Since:
// 412; If-None-Match, If-Modified-Since: 304); a single byte range (206,
// 416 when unsatisfiable) honouring If-Range. Several ranges in one
// request are answered with the whole file (200), which §14.2 allows.
// Content-Type by extension (the mime package), application/octet-stream
// otherwise.
//
// I/O. Bodies go with sendfile(2) (server.ResponseWriter.SendFile): on
// the goroutine engine through (*net.TCPConn).ReadFrom, on the event loop
// as a duplicate descriptor the loop sends after the head on its
// non-blocking socket, 1 MiB per turn at most, under EPOLLOUT
// back-pressure and the Write timeout. Files up to 32 KiB are copied with
// their head in one write instead. The loop hands a file over InlineMax
// to a goroutine only when its bytes must pass through the process: TLS
// (no kTLS here: records are sealed in the process) or a compressing
// route. File reads on the loop (open, stat, a small file's read, and
// sendfile's own page-cache reads) block it on a cache miss, as in an
// nginx worker without aio.
package files
