package config

import (
	"github.com/simdedge/simdedge/server/files"
	"go.yaml.in/yaml/v3"
)

// Files is the static-files action (server/files):
//
//	routes:
//	  - match: {path_prefix: /static/}
//	    files: {root: /srv/www, index: index.html, follow_symlinks: false}
//
// The whole request path is looked up under root (nginx's root, Caddy's
// file_server; a rewrite's strip_prefix removes a prefix first). index
// defaults to index.html; follow_symlinks (default false) lets symlinks
// lead out of root, which is otherwise answered 404.
type Files struct {
	Root           string `yaml:"root"`
	Index          string `yaml:"index"`
	FollowSymlinks bool   `yaml:"follow_symlinks"`
}

func (d *decoder) files(dst **Files, mark func(string, int)) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		f := &Files{}
		*dst = f
		mark("files", v.Line)
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"root":            d.str(&f.Root),
			"index":           d.str(&f.Index),
			"follow_symlinks": d.flag(&f.FollowSymlinks),
		})
		if f.Root == "" {
			d.fail(v, key+".root", "missing")
		}
	}
}

func (f *Files) handler() (*files.Handler, error) {
	return files.New(files.Options{Root: f.Root, Index: f.Index, FollowSymlinks: f.FollowSymlinks})
}

// withDefaults fills what `simdedge check` prints.
func (f *Files) withDefaults() *Files {
	e := *f
	if e.Index == "" {
		e.Index = files.DefaultIndex
	}
	return &e
}
