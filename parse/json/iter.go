package json

// ArrayIter walks the elements of an array without allocating:
//
//	it, err := v.Array()
//	for it.Next() { e := it.Value() ... }
type ArrayIter struct {
	d         *Document
	next, end int
	cur       int
}

// Array returns an iterator over the elements of an array.
func (v Value) Array() (ArrayIter, error) {
	e, ok := v.entry()
	if !ok || tagOf(e) != tagArray {
		return ArrayIter{}, ErrWrongKind
	}
	return ArrayIter{d: v.d, next: v.i + 1, end: int(payloadOf(e)) - 1, cur: -1}, nil
}

// Next advances to the next element.
func (it *ArrayIter) Next() bool {
	if it.next >= it.end {
		return false
	}
	it.cur = it.next
	it.next = next(it.d.tape, it.cur)
	return true
}

// Value returns the current element.
func (it *ArrayIter) Value() Value { return Value{d: it.d, i: it.cur} }

// ObjectIter walks the members of an object in document order.
type ObjectIter struct {
	d         *Document
	next, end int
	key       int
}

// Object returns an iterator over the members of an object.
func (v Value) Object() (ObjectIter, error) {
	e, ok := v.entry()
	if !ok || tagOf(e) != tagObject {
		return ObjectIter{}, ErrWrongKind
	}
	return ObjectIter{d: v.d, next: v.i + 1, end: int(payloadOf(e)) - 1, key: -1}, nil
}

// Next advances to the next member.
func (it *ObjectIter) Next() bool {
	if it.next >= it.end {
		return false
	}
	it.key = it.next
	it.next = next(it.d.tape, it.key+2)
	return true
}

// Key returns the current member's name as a string Value.
func (it *ObjectIter) Key() Value { return Value{d: it.d, i: it.key} }

// Value returns the current member's value.
func (it *ObjectIter) Value() Value { return Value{d: it.d, i: it.key + 2} }
