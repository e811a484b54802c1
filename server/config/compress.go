package config

import (
	"github.com/simdedge/simdedge/server/compress"
	"go.yaml.in/yaml/v3"
)

// Compress is a route's response compression (server/compress):
//
//	routes:
//	  - match: {path_prefix: /api/}
//	    proxy: {upstream: api}
//	    compress: {encodings: [zstd, br, gzip], min_length: 1024, types: [application/json, text/*], levels: {gzip: 5}}
//
// Defaults (Caddy's encode): encodings [zstd, gzip] (br is opt-in: its
// pure-Go encoder costs several times gzip's CPU), min_length 512 (at most
// 32768), types compress.DefaultTypes, levels gzip 5, br 4, zstd 3.
// `compress: {}` takes every default. It applies to every action of the
// route: respond, echo, files, handler, and proxy on both proxy paths.
type Compress struct {
	Encodings []string       `yaml:"encodings,flow"`
	MinLength int64          `yaml:"min_length"`
	Types     []string       `yaml:"types,flow"`
	Levels    map[string]int `yaml:"levels,omitempty"`
}

func (d *decoder) compress(dst **Compress) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		c := &Compress{}
		*dst = c
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"encodings":  d.strings(&c.Encodings),
			"min_length": d.integer(&c.MinLength),
			"types":      d.strings(&c.Types),
			"levels": func(v *yaml.Node, key string) {
				if v.Kind != yaml.MappingNode {
					d.fail(v, key, "must be a mapping")
					return
				}
				c.Levels = map[string]int{}
				for i := 0; i+1 < len(v.Content); i += 2 {
					var n int64
					d.integer(&n)(v.Content[i+1], join(key, v.Content[i].Value))
					c.Levels[v.Content[i].Value] = int(n)
				}
			},
		})
		if _, err := c.policy(); err != nil {
			d.fail(v, key, err.Error())
		}
	}
}

func (c *Compress) policy() (*compress.Policy, error) {
	return compress.New(compress.Options{Encodings: c.Encodings, MinLength: c.MinLength, Types: c.Types, Levels: c.Levels})
}

// withDefaults fills what `simdedge check` prints.
func (c *Compress) withDefaults() *Compress {
	e := *c
	if len(e.Encodings) == 0 {
		e.Encodings = compress.DefaultEncodings
	}
	if e.MinLength == 0 {
		e.MinLength = compress.DefaultMinLength
	}
	if len(e.Types) == 0 {
		e.Types = compress.DefaultTypes
	}
	levels := map[string]int{"gzip": compress.DefaultGzipLevel, "br": compress.DefaultBrotliLevel, "zstd": compress.DefaultZstdLevel}
	for k, v := range c.Levels {
		levels[k] = v
	}
	e.Levels = levels
	return &e
}
