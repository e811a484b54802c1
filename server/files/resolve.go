package files

import "errors"

// ErrBadPath is a request path refused before the file system is asked.
var ErrBadPath = errors.New("files: path not allowed")

// Resolve turns a request target's path (origin form, up to '?') into a
// path relative to the root: segments joined by '/', no ".." or "."
// segment, no empty segment, no leading '/', "." for the root itself.
// dir reports that the path names a directory: it ended in '/' or in a
// "." segment ("a/." is "a/", RFC 3986 §5.2.4), so that a regular file
// named so is not found, as on nginx (the handler). It decodes percent-encoding
// once and refuses (ErrBadPath) what could reach outside the root or
// confuse the file system: ".." after decoding, an encoded '/', any '\',
// NUL or other control byte, and malformed escapes. It never returns a
// path that leaves the root lexically; symlinks are the opener's matter.
func Resolve(path []byte) (rel string, dir bool, err error) {
	if len(path) == 0 || path[0] != '/' {
		return "", false, ErrBadPath
	}
	out := make([]byte, 0, len(path))
	seg := 0 // start of the current segment in out
	endSeg := func() error {
		s := out[seg:]
		switch string(s) {
		case "", ".":
			out = out[:seg]
		case "..":
			return ErrBadPath
		default:
			out = append(out, '/')
		}
		seg = len(out)
		return nil
	}
	for i := 1; i < len(path); i++ {
		c := path[i]
		switch {
		case c == '/':
			if err := endSeg(); err != nil {
				return "", false, err
			}
			continue
		case c == '%':
			if i+2 >= len(path) {
				return "", false, ErrBadPath
			}
			hi, ok1 := unhex(path[i+1])
			lo, ok2 := unhex(path[i+2])
			if !ok1 || !ok2 {
				return "", false, ErrBadPath
			}
			c = hi<<4 | lo
			i += 2
			if c == '/' {
				return "", false, ErrBadPath
			}
		}
		if c == '\\' || c < 0x20 || c == 0x7f {
			return "", false, ErrBadPath
		}
		out = append(out, c)
	}
	dir = path[len(path)-1] == '/' || string(out[seg:]) == "."
	if err := endSeg(); err != nil {
		return "", false, err
	}
	if len(out) > 0 {
		out = out[:len(out)-1] // the '/' after the last segment
	}
	if len(out) == 0 {
		return ".", true, nil
	}
	return string(out), dir, nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
