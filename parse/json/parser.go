package json

// Parser parses JSON documents into a reusable tape. A Parser is not safe for
// concurrent use; give each goroutine (connection) its own. After the first
// few documents its buffers have grown to size and parsing allocates nothing
// (pure-Go engine; simdjson-go itself allocates a few small objects per call
// on large inputs because it runs its two stages in two goroutines).
type Parser struct {
	doc Document
}

// Document is a parsed JSON text (or a sequence of texts, for NDJSON). It is
// a view: strings and, with the pure-Go engine, numbers point into the input
// passed to Parse, which the caller must neither change nor recycle while
// the document is in use. The next Parse on the same Parser invalidates it.
type Document struct {
	tape  []uint64 // the tape (engine-owned storage, see tape.go)
	strs  []byte   // unescaped strings: simd engine, or pure-Go with Options.Eager (else nil)
	ubuf  strBuf   // pure-Go engine's buffer behind strs (Options.Eager), reused
	msg   []byte   // the input the offsets refer to
	own   []uint64 // pure-Go engine tape storage, reused
	stack []int    // pure-Go engine container stack, reused
	marks marks    // pure-Go engine class masks (marks.go), reused
	kinds []bool   // Validate's container stack (true: object), reused
	opts  Options
	simd  simdState
	// simdMin is simdMinLen; tests lower it to run the simd engine on
	// small inputs.
	simdMin int
	// noMarks makes the pure-Go engine use its word loops even where
	// marks pay, and marksMin is marksMinLen; tests set them to compare
	// both paths on inputs of every size.
	noMarks  bool
	marksMin int
	// index is the structural index (index.go), reused; noIndex makes
	// the pure-Go engine skip it, for tests comparing both paths.
	index   index
	noIndex bool
}

// NewParser returns a Parser with the given options (zero: defaults).
func NewParser(opts Options) *Parser {
	p := &Parser{}
	p.doc.opts = opts.withDefaults()
	p.doc.simdMin, p.doc.marksMin = simdMinLen, marksMinLen
	return p
}

// Engine reports the engine this parser uses.
func (p *Parser) Engine() Engine { return p.doc.opts.Engine }

const (
	opParse    = "parse"
	opParseND  = "parse-nd"
	opValidate = "validate"
)

// Parse parses one JSON text (RFC 8259: any value, surrounded by optional
// whitespace). The document is valid until the next call on p.
func (p *Parser) Parse(b []byte) (*Document, error) { return p.parse(b, false, opParse) }

// ParseND parses newline-delimited JSON: zero or more JSON texts, each
// starting on a new line (whitespace around them is allowed, as simdjson-go
// allows it). Iterate them with Document.Roots.
func (p *Parser) ParseND(b []byte) (*Document, error) { return p.parse(b, true, opParseND) }

// Validate reports whether b is one valid JSON text, with the error offset.
// It runs the pure-Go engine's state machine without writing a tape, on
// every machine: it accepts exactly what Parse accepts, and measured faster
// than a simdjson-go parse on the benchmark corpora.
func (p *Parser) Validate(b []byte) error {
	d := &p.doc
	if d.opts.MaxDepth == 0 {
		d.opts = d.opts.withDefaults()
		d.simdMin, d.marksMin = simdMinLen, marksMinLen
	}
	if len(b) > d.opts.MaxSize {
		return &Error{Op: opValidate, Offset: d.opts.MaxSize, Err: ErrTooLarge}
	}
	var (
		at  int
		err error
	)
	mk, checkUTF8 := d.marksFor(b)
	d.kinds, at, err = validate(d.kinds[:0], b, d.opts.MaxDepth, checkUTF8, mk)
	if err != nil {
		return &Error{Op: opValidate, Offset: at, Err: err}
	}
	return nil
}

func (p *Parser) parse(b []byte, nd bool, op string) (*Document, error) {
	d := &p.doc
	if d.opts.MaxDepth == 0 { // zero Parser value
		d.opts = d.opts.withDefaults()
		d.simdMin, d.marksMin = simdMinLen, marksMinLen
	}
	if len(b) > d.opts.MaxSize {
		return nil, &Error{Op: op, Offset: d.opts.MaxSize, Err: ErrTooLarge}
	}
	if d.opts.Engine == EngineSIMD && len(b) >= d.simdMin && d.parseSIMD(b, nd) {
		return d, nil
	}
	// The pure-Go engine parses everything the simd engine does not take,
	// and gives the verdict and the error offset whenever simdjson-go
	// rejects (its errors carry no offset, and it refuses top-level scalars
	// and out-of-range floats that RFC 8259 allows).
	d.msg, d.strs = b, nil
	at, err := d.buildGo(b, nd)
	if d.opts.Eager {
		d.strs = d.ubuf.b
	}
	if err != nil {
		d.tape = d.own
		return nil, &Error{Op: op, Offset: at, Err: err}
	}
	d.tape = d.own
	return d, nil
}

// Valid reports whether b is one valid JSON text. It uses a fresh Parser
// (its stack allocates for nested input); hot paths keep a Parser and call
// Validate.
func Valid(b []byte) bool {
	var p Parser
	return p.Validate(b) == nil
}

// Root returns the (first) top-level value. For an empty NDJSON input it
// returns a Value whose Kind is Invalid.
func (d *Document) Root() Value {
	if len(d.tape) < 2 {
		return Value{d: d, i: -1}
	}
	return Value{d: d, i: 1}
}

// Roots iterates the top-level values (several for NDJSON).
func (d *Document) Roots() RootIter { return RootIter{d: d, next: 0, cur: -1} }

// RootIter walks the top-level values of a document.
type RootIter struct {
	d    *Document
	next int
	cur  int
}

// Next advances to the next top-level value.
func (it *RootIter) Next() bool {
	t := it.d.tape
	if it.next+1 >= len(t) || tagOf(t[it.next]) != tagRoot {
		return false
	}
	it.cur = it.next + 1
	it.next = int(payloadOf(t[it.next]))
	return true
}

// Value returns the current top-level value.
func (it *RootIter) Value() Value { return Value{d: it.d, i: it.cur} }
