package xds

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// known checks that m sets no field outside allowed (proto field names):
// every field simdedge neither honours nor knows to be harmless is a
// NACK naming it (docs/xds.md lists both kinds). path prefixes the field
// in the error. A nil message passes.
func (a at) known(m proto.Message, path string, allowed ...string) error {
	if m == nil {
		return nil
	}
	r := m.ProtoReflect()
	if !r.IsValid() {
		return nil
	}
	var bad string
	r.Range(func(fd protoreflect.FieldDescriptor, _ protoreflect.Value) bool {
		name := string(fd.Name())
		for _, ok := range allowed {
			if ok == name {
				return true
			}
		}
		bad = name
		return false
	})
	if bad == "" {
		return nil
	}
	return a.refused(join(path, bad))
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}
