package json

// Kind is the JSON type of a value (RFC 8259 section 3).
type Kind uint8

const (
	Invalid Kind = iota // no value (missing path, empty NDJSON)
	Null
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"invalid", "null", "bool", "number", "string", "array", "object"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Value is a view of one value of a Document: a position on its tape. It is
// valid as long as the Document is (see Document).
type Value struct {
	d *Document
	i int
}

func (v Value) entry() (uint64, bool) {
	if v.d == nil || v.i < 0 || v.i >= len(v.d.tape) {
		return 0, false
	}
	return v.d.tape[v.i], true
}

// Kind returns the value's JSON type.
func (v Value) Kind() Kind {
	e, ok := v.entry()
	if !ok {
		return Invalid
	}
	switch tagOf(e) {
	case tagNull:
		return Null
	case tagTrue, tagFalse:
		return Bool
	case tagNumber, tagInt, tagUint, tagFloat:
		return Number
	case tagString:
		return String
	case tagArray:
		return Array
	case tagObject:
		return Object
	}
	return Invalid
}

// Exists reports whether v refers to a value.
func (v Value) Exists() bool { return v.Kind() != Invalid }

// next returns the tape index after the value at i.
func next(t []uint64, i int) int {
	switch tagOf(t[i]) {
	case tagObject, tagArray:
		return int(payloadOf(t[i]))
	case tagString, tagNumber, tagInt, tagUint, tagFloat:
		return i + 2
	}
	return i + 1
}

// Get follows a path of object keys (string) and array indexes (int), as
// in v.Get("statuses", 0, "user", "id").
func (v Value) Get(path ...any) (Value, error) {
	var err error
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v, err = v.Key(k)
		case int:
			v, err = v.Index(k)
		default:
			return Value{}, ErrBadPath
		}
		if err != nil {
			return Value{}, err
		}
	}
	return v, nil
}

// Key returns the member named name of an object (the first one if the name
// repeats; RFC 8259 section 4 leaves duplicates to the implementation).
func (v Value) Key(name string) (Value, error) {
	e, ok := v.entry()
	if !ok || tagOf(e) != tagObject {
		return Value{}, ErrWrongKind
	}
	t := v.d.tape
	end := int(payloadOf(e)) - 1
	for j := v.i + 1; j < end; {
		if v.d.keyEquals(j, name) {
			return Value{d: v.d, i: j + 2}, nil
		}
		j = next(t, j+2)
	}
	return Value{}, ErrNotFound
}

// Index returns element n of an array.
func (v Value) Index(n int) (Value, error) {
	e, ok := v.entry()
	if !ok || tagOf(e) != tagArray {
		return Value{}, ErrWrongKind
	}
	t := v.d.tape
	end := int(payloadOf(e)) - 1
	j := v.i + 1
	for ; n > 0 && j < end; n-- {
		j = next(t, j)
	}
	if n != 0 || j >= end {
		return Value{}, ErrNotFound
	}
	return Value{d: v.d, i: j}, nil
}

// rawString returns the stored bytes of the string at tape index i and
// whether they still hold escapes.
func (d *Document) rawString(i int) (s []byte, escaped bool) {
	p := payloadOf(d.tape[i])
	n := d.tape[i+1]
	if p&strBufBit != 0 {
		off := p &^ strBufBit
		return d.strs[off : off+n], false
	}
	off := p & strOffMsk
	return d.msg[off : off+n], p&strEscBit != 0
}

func (d *Document) keyEquals(i int, name string) bool {
	s, esc := d.rawString(i)
	if !esc {
		return string(s) == name
	}
	// Unescaping never lengthens a string.
	if len(name) > len(s) {
		return false
	}
	var buf [keyScratch]byte
	u := appendUnescaped(buf[:0], s)
	return string(u) == name
}

// keyScratch is the stack buffer for comparing escaped keys; longer keys
// spill to the heap, which only escaped keys longer than this pay.
const keyScratch = 128

// View returns the string's bytes without copying when they need no
// unescaping (ok false otherwise, or for a non-string: use AppendString).
// The bytes belong to the document's input or engine buffer: read only.
func (v Value) View() (s []byte, ok bool) {
	e, ok := v.entry()
	if !ok || tagOf(e) != tagString {
		return nil, false
	}
	s, esc := v.d.rawString(v.i)
	if esc {
		return nil, false
	}
	return s, true
}

// AppendString appends the unescaped string to dst.
func (v Value) AppendString(dst []byte) ([]byte, error) {
	e, ok := v.entry()
	if !ok || tagOf(e) != tagString {
		return dst, ErrWrongKind
	}
	s, esc := v.d.rawString(v.i)
	if !esc {
		return append(dst, s...), nil
	}
	return appendUnescaped(dst, s), nil
}

// String returns a copy of the unescaped string (it allocates; hot paths use
// View or AppendString).
func (v Value) String() (string, error) {
	if s, ok := v.View(); ok {
		return string(s), nil
	}
	b, err := v.AppendString(nil)
	return string(b), err
}

// Equal reports whether v is a string equal to s after unescaping.
func (v Value) Equal(s string) bool {
	e, ok := v.entry()
	return ok && tagOf(e) == tagString && v.d.keyEquals(v.i, s)
}

// Bool returns the value of true or false.
func (v Value) Bool() (bool, error) {
	e, _ := v.entry()
	switch tagOf(e) {
	case tagTrue:
		return true, nil
	case tagFalse:
		return false, nil
	}
	return false, ErrWrongKind
}

// IsNull reports whether v is null.
func (v Value) IsNull() bool { return v.Kind() == Null }

// numberText returns the text of a number held as text (pure-Go engine).
func (d *Document) numberText(i int) []byte {
	off := payloadOf(d.tape[i])
	return d.msg[off : off+d.tape[i+1]]
}
