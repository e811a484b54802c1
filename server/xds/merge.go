package xds

import (
	"errors"

	"github.com/simdedge/simdedge/server/config"
	"go.yaml.in/yaml/v3"
)

// Merge puts f beside the static configuration of the file (its bytes
// and its parsed form) and parses the whole with server/config, so that
// what arrives over xDS passes every check a file does. Static routes
// come first, so a static route wins over an xDS route it overlaps; an
// xDS listener on a static listener's address, or a cluster named as a
// static upstream, is refused (ErrClash).
func Merge(file []byte, static *config.Config, f *Fragment) (*config.Config, error) {
	if err := clashes(static, f); err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(file, &doc); err != nil || doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.Join(ErrConfig, errors.New("xds: the file is not a YAML mapping"))
	}
	root := doc.Content[0]
	for _, part := range []struct {
		key string
		v   any
		n   int
	}{{"listeners", f.Listeners, len(f.Listeners)}, {"upstreams", f.Upstreams, len(f.Upstreams)}, {"routes", f.Routes, len(f.Routes)}} {
		if part.n == 0 {
			continue
		}
		var n yaml.Node
		if err := n.Encode(part.v); err != nil {
			return nil, errors.Join(ErrConfig, err)
		}
		appendSeq(root, part.key, n.Content)
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, errors.Join(ErrConfig, err)
	}
	c, err := config.Parse(out)
	if err != nil {
		return nil, errors.Join(ErrConfig, err)
	}
	return c, nil
}

// appendSeq appends items to the sequence at key of mapping m, adding
// the key if m has none.
func appendSeq(m *yaml.Node, key string, items []*yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key && m.Content[i+1].Kind == yaml.SequenceNode {
			m.Content[i+1].Content = append(m.Content[i+1].Content, items...)
			return
		}
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items})
}

// clashes refuses xDS listeners and upstreams that take a static one's
// address or name.
func clashes(static *config.Config, f *Fragment) error {
	addrs := map[string]bool{}
	if static.Listen != "" {
		addrs[static.Listen] = true
	}
	for _, l := range static.Listeners {
		addrs[l.Address] = true
	}
	for _, l := range f.Listeners {
		if addrs[l.Address] {
			return &FieldError{Kind: "listener", Resource: safeName(l.Address), Field: "address", Msg: "a static listener has this address", Err: ErrClash}
		}
	}
	names := map[string]bool{}
	for _, u := range static.Upstreams {
		names[u.Name] = true
	}
	for _, u := range f.Upstreams {
		if names[u.Name] {
			return &FieldError{Kind: "cluster", Resource: safeName(u.cluster), Field: "name", Msg: "a static upstream has this name", Err: ErrClash}
		}
	}
	return nil
}
