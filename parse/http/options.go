package http

// Default limits. They follow common servers: nginx allows 8 KiB per line,
// Envoy 60 KiB and 100 headers; a request beyond them is refused with 414
// or 431 before any handler sees it.
const (
	DefaultMaxRequestLine = 8 << 10
	DefaultMaxHeaderBytes = 64 << 10
	DefaultMaxHeaders     = 100
)

// Options configures a Parser. The zero value gives the strict defaults.
type Options struct {
	// MaxRequestLine bounds the request line (or status line), including
	// its CRLF. Zero means DefaultMaxRequestLine.
	MaxRequestLine int
	// MaxHeaderBytes bounds the whole head: start line, field lines and
	// the final empty line. Zero means DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxHeaders bounds the number of field lines. Zero means
	// DefaultMaxHeaders.
	MaxHeaders int
	// AllowBareLF accepts a lone LF as a line terminator (RFC 9112 §2.2
	// lets a recipient do so). The default rejects it with ErrBareLF,
	// because parsers that disagree on line ends are a smuggling vector.
	AllowBareLF bool
	// OnlyChunked refuses a request whose Transfer-Encoding lists a
	// coding other than chunked ("gzip, chunked") with
	// ErrTransferCodingNotImplemented (501), as nginx does. A server
	// that removes only the chunked framing sets it: otherwise such a
	// body reaches its handlers (or a proxy's upstream) still coded, as
	// if it were the content.
	OnlyChunked bool
}

// Parser parses message heads with fixed Options. It holds no per-message
// state, so one Parser may be used by many goroutines at once.
type Parser struct {
	maxLine    int
	maxHead    int
	maxHeaders int
	bareLF     bool
	// onlyChunked: Options.OnlyChunked.
	onlyChunked bool
	// noHostCheck skips the Host rule of RFC 9112 §3.2. Only the llhttp
	// conformance test sets it: llhttp does not check Host, and most of
	// its HTTP/1.1 cases have none, so without it those cases could not
	// test anything else.
	noHostCheck bool
}

// NewParser returns a Parser for o, with zero fields replaced by defaults.
func NewParser(o Options) *Parser {
	p := &Parser{
		maxLine:     o.MaxRequestLine,
		maxHead:     o.MaxHeaderBytes,
		maxHeaders:  o.MaxHeaders,
		bareLF:      o.AllowBareLF,
		onlyChunked: o.OnlyChunked,
	}
	if p.maxLine <= 0 {
		p.maxLine = DefaultMaxRequestLine
	}
	if p.maxHead <= 0 {
		p.maxHead = DefaultMaxHeaderBytes
	}
	if p.maxHeaders <= 0 {
		p.maxHeaders = DefaultMaxHeaders
	}
	return p
}

var defaultParser = NewParser(Options{})

// ParseRequest parses a request head with the default (strict) Options.
// See Parser.ParseRequest.
func ParseRequest(buf []byte, req *Request) (n int, err error) {
	return defaultParser.ParseRequest(buf, req)
}

// ParseResponse parses a response head with the default (strict) Options.
// See Parser.ParseResponse.
func ParseResponse(buf []byte, resp *Response) (n int, err error) {
	return defaultParser.ParseResponse(buf, resp)
}
