package config

import (
	"github.com/simdedge/simdedge/server/pathnorm"
	"go.yaml.in/yaml/v3"
)

// Paths are the path normalisation keys (server/pathnorm), at the top
// level and on a tcp listener, which then overrides the top level key by
// key. Unset keys take the defaults: normalize_path true, merge_slashes
// true, escaped_slashes keep.
type Paths struct {
	NormalizePath  *bool  `yaml:"normalize_path,omitempty"`
	MergeSlashes   *bool  `yaml:"merge_slashes,omitempty"`
	EscapedSlashes string `yaml:"escaped_slashes,omitempty"`
}

// Values of escaped_slashes (pathnorm.EscapedSlashes).
const (
	EscapedKeep     = "keep"
	EscapedReject   = "reject"
	EscapedUnescape = "unescape"
)

var escapedSlashes = map[string]pathnorm.EscapedSlashes{
	EscapedKeep: pathnorm.Keep, EscapedReject: pathnorm.Reject, EscapedUnescape: pathnorm.Unescape,
}

// pathKeys decodes p's keys into the fields map of the section holding
// them.
func (d *decoder) pathKeys(p *Paths, fields map[string]func(*yaml.Node, string)) {
	fields["normalize_path"] = d.boolean(&p.NormalizePath)
	fields["merge_slashes"] = d.boolean(&p.MergeSlashes)
	fields["escaped_slashes"] = func(v *yaml.Node, key string) {
		d.str(&p.EscapedSlashes)(v, key)
		if _, ok := escapedSlashes[p.EscapedSlashes]; !ok {
			d.fail(v, key, `must be "keep", "reject" or "unescape"`)
		}
	}
}

// set reports whether any key is given.
func (p Paths) set() bool {
	return p.NormalizePath != nil || p.MergeSlashes != nil || p.EscapedSlashes != ""
}

// Options returns the normalisation p describes over base (the top
// level's for a listener, the defaults for the top level).
func (p Paths) Options(base pathnorm.Options) pathnorm.Options {
	if p.NormalizePath != nil {
		base.Off = !*p.NormalizePath
	}
	if p.MergeSlashes != nil {
		base.KeepSlashes = !*p.MergeSlashes
	}
	if p.EscapedSlashes != "" {
		base.EscapedSlashes = escapedSlashes[p.EscapedSlashes]
	}
	return base
}

// withDefaults fills every key (simdedge check prints them).
func (p Paths) withDefaults() Paths {
	t := true
	if p.NormalizePath == nil {
		p.NormalizePath = &t
	}
	if p.MergeSlashes == nil {
		p.MergeSlashes = &t
	}
	if p.EscapedSlashes == "" {
		p.EscapedSlashes = EscapedKeep
	}
	return p
}

// ListenerPaths returns listener l's own normalisation under the top
// level's, or nil when l sets no key (it then follows the top level,
// also across a reload).
func (c *Config) ListenerPaths(l Listener) *pathnorm.Options {
	if !l.Paths.set() {
		return nil
	}
	o := l.Paths.Options(c.Paths.Options(pathnorm.Options{}))
	return &o
}
