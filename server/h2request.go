package server

// HTTP2 reports whether the request came over HTTP/2. Its head then holds
// the pseudo-headers' values (Method from :method, Target from :path or,
// for CONNECT, :authority, Host from :authority or else the host field,
// checked as the HTTP/1.1 parser checks them: h2map.go) with Version HTTP/1.1,
// and its body, unless Content-Length announced a length, is streamed as
// a chunked one is.
func (r *Request) HTTP2() bool { return r.body.h2 != nil }

// HTTP3 reports whether the request came over HTTP/3; its head is mapped
// as an HTTP/2 one is (see HTTP2).
func (r *Request) HTTP3() bool { return r.body.h3 != nil }

// h2Raw renders the head as HTTP/1.1 (for Clone, which re-parses it).
func (r *Request) h2Raw() []byte {
	h := &r.head
	b := make([]byte, 0, 256)
	b = append(b, h.Method...)
	b = append(b, ' ')
	b = append(b, h.Target...)
	b = append(b, " HTTP/1.1\r\n"...)
	for _, f := range h.Headers {
		b = append(b, f.Name...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...)
}
