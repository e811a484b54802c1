package envelope

import (
	"encoding/binary"
	"errors"
)

// View verification errors.
var (
	ErrShort      = errors.New("envelope: envelope shorter than its header")
	ErrIdentifier = errors.New("envelope: envelope has the wrong file identifier")
	ErrBounds     = errors.New("envelope: envelope offset or length out of bounds")
	ErrAlign      = errors.New("envelope: envelope offset misaligned")
	ErrVTable     = errors.New("envelope: envelope vtable malformed")
	ErrTooLarge   = errors.New("envelope: envelope exceeds the size limit")
)

// The FlatBuffers binary format (flatbuffers.dev, "Internals"): a buffer
// starts with the uoffset of the root table, then the 4-byte file
// identifier. A table starts with an soffset to its vtable (vtable = table -
// soffset); a vtable is [vtable size, table size, one voffset per field],
// all uint16, voffset 0 meaning "absent". Offset fields hold a uoffset
// relative to their own position; a vector is a uint32 length and elements.
const (
	uoffsetSize  = 4
	soffsetSize  = 4
	voffsetSize  = 2
	vtHeaderSize = 2 * voffsetSize // vtable size + table size
	fileIDSize   = 4
	rootHeader   = uoffsetSize + fileIDSize

	// maxEnvelopeSize keeps every offset sum below 2^31, so the uint32
	// arithmetic of the generated accessors cannot wrap.
	maxEnvelopeSize = 1<<31 - 1
)

// Field ids in schema order; the vtable slot of field id k is 4 + 2k.
const (
	fReqMethod = iota
	fReqTarget
	fReqVersion
	fReqHeaders
	fReqBody
	fReqURL
)

const (
	fHdrName = iota
	fHdrValue
)

// URL fields are ids 0..numURLFields-1, all byte vectors.
const numURLFields = 9

func fieldSlot(id int) int { return vtHeaderSize + voffsetSize*id }

// fbTable is a verified table: its position, vtable position and sizes.
type fbTable struct {
	pos, vt, vtSize, size int
}

// verifier checks an untrusted buffer against the envelope schema before
// any generated accessor touches it: every offset, length and vtable entry
// the accessors will follow is proved to lie inside the buffer.
type verifier struct {
	buf []byte
}

func (v *verifier) u16(at int) int { return int(binary.LittleEndian.Uint16(v.buf[at:])) }

// inBounds reports whether [at, at+n) lies in the buffer (no overflow: both
// are below 2^32 and len(buf) below 2^31).
func (v *verifier) inBounds(at, n int) bool {
	return at >= 0 && n >= 0 && at <= len(v.buf) && n <= len(v.buf)-at
}

func (v *verifier) table(pos int) (fbTable, error) {
	if !v.inBounds(pos, soffsetSize) {
		return fbTable{}, ErrBounds
	}
	if pos%soffsetSize != 0 {
		return fbTable{}, ErrAlign
	}
	// int64: on 32-bit platforms pos - soffset can leave the int range.
	soff := int64(int32(binary.LittleEndian.Uint32(v.buf[pos:])))
	vt64 := int64(pos) - soff
	if vt64 < 0 || vt64 > int64(len(v.buf)) {
		return fbTable{}, ErrBounds
	}
	vt := int(vt64)
	if !v.inBounds(vt, vtHeaderSize) {
		return fbTable{}, ErrBounds
	}
	if vt%voffsetSize != 0 {
		return fbTable{}, ErrAlign
	}
	vtSize, size := v.u16(vt), v.u16(vt+voffsetSize)
	// An odd vtable size would let the accessors read a slot half outside it.
	if vtSize < vtHeaderSize || vtSize%voffsetSize != 0 || size < soffsetSize {
		return fbTable{}, ErrVTable
	}
	if !v.inBounds(vt, vtSize) || !v.inBounds(pos, size) {
		return fbTable{}, ErrBounds
	}
	return fbTable{pos: pos, vt: vt, vtSize: vtSize, size: size}, nil
}

// field returns the absolute position of field id's inline data (0: absent),
// checking that width bytes of it lie inside the table.
func (v *verifier) field(t fbTable, id, width int) (int, error) {
	slot := fieldSlot(id)
	if slot >= t.vtSize { // the accessors' rule: slot < vtable size
		return 0, nil
	}
	off := v.u16(t.vt + slot)
	if off == 0 {
		return 0, nil
	}
	if off < soffsetSize || off > t.size-width {
		return 0, ErrVTable
	}
	return t.pos + off, nil
}

// indirect follows the uoffset stored at at.
func (v *verifier) indirect(at int) (int, error) {
	if at%uoffsetSize != 0 {
		return 0, ErrAlign
	}
	target := uint64(at) + uint64(binary.LittleEndian.Uint32(v.buf[at:]))
	if target > uint64(len(v.buf)) {
		return 0, ErrBounds
	}
	return int(target), nil
}

// vector checks the vector referred to by field id and returns the position
// of its first element and its length.
func (v *verifier) vector(t fbTable, id, elemSize int) (start, n int, err error) {
	at, err := v.field(t, id, uoffsetSize)
	if err != nil || at == 0 {
		return 0, 0, err
	}
	vec, err := v.indirect(at)
	if err != nil {
		return 0, 0, err
	}
	if !v.inBounds(vec, uoffsetSize) {
		return 0, 0, ErrBounds
	}
	if vec%uoffsetSize != 0 {
		return 0, 0, ErrAlign
	}
	n64 := uint64(binary.LittleEndian.Uint32(v.buf[vec:]))
	start = vec + uoffsetSize
	if n64 > uint64((len(v.buf)-start)/elemSize) {
		return 0, 0, ErrBounds
	}
	return start, int(n64), nil
}

// child verifies the table referred to by field id (0 position: absent).
func (v *verifier) child(t fbTable, id int) (fbTable, bool, error) {
	at, err := v.field(t, id, uoffsetSize)
	if err != nil || at == 0 {
		return fbTable{}, false, err
	}
	pos, err := v.indirect(at)
	if err != nil {
		return fbTable{}, false, err
	}
	c, err := v.table(pos)
	return c, err == nil, err
}

// verified is what verify learned that the reader reuses: the root table
// and the headers vector (first element position and length).
type verified struct {
	root               fbTable
	hdrStart, hdrCount int
}

// verify checks buf against schema/request.fbs completely.
func verify(buf []byte) (verified, error) {
	if len(buf) > maxEnvelopeSize {
		return verified{}, ErrTooLarge
	}
	if len(buf) < rootHeader {
		return verified{}, ErrShort
	}
	if string(buf[uoffsetSize:rootHeader]) != Identifier {
		return verified{}, ErrIdentifier
	}
	v := verifier{buf: buf}
	rootPos, err := v.indirect(0)
	if err != nil {
		return verified{}, err
	}
	root, err := v.table(rootPos)
	if err != nil {
		return verified{}, err
	}
	for _, id := range [...]int{fReqMethod, fReqTarget, fReqBody} {
		if _, _, err := v.vector(root, id, 1); err != nil {
			return verified{}, err
		}
	}
	if _, err := v.field(root, fReqVersion, 1); err != nil {
		return verified{}, err
	}
	start, n, err := v.vector(root, fReqHeaders, uoffsetSize)
	if err != nil {
		return verified{}, err
	}
	for i := range n {
		pos, err := v.indirect(start + i*uoffsetSize)
		if err != nil {
			return verified{}, err
		}
		h, err := v.table(pos)
		if err != nil {
			return verified{}, err
		}
		for _, id := range [...]int{fHdrName, fHdrValue} {
			if _, _, err := v.vector(h, id, 1); err != nil {
				return verified{}, err
			}
		}
	}
	u, ok, err := v.child(root, fReqURL)
	if err != nil {
		return verified{}, err
	}
	if ok {
		for id := range numURLFields {
			if _, _, err := v.vector(u, id, 1); err != nil {
				return verified{}, err
			}
		}
	}
	return verified{root: root, hdrStart: start, hdrCount: n}, nil
}
