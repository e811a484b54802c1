// Command gendoc writes simdedge's configuration reference, docs/config.md,
// and its JSON Schema, docs/simdedge.schema.json, from the config types
// (server/config) and the doc table kept beside this file (keys_*.go):
//
//	go run ./server/config/internal/gendoc          # from the repository root
//	go generate ./server/config                     # the same, as make generate does
//
// Key names, types, nesting and most defaults come from the code: the
// walk reads the structs' yaml tags by reflection, and defaults are read
// from Config.WithDefaults on a configuration that has every section. The
// table gives what code cannot: the text, allowed values, whether a
// SIGHUP reload applies the key, and an example. The tests fail when a key
// has no entry, an entry names no key, an example does not load, or the
// committed files differ from what this program writes.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

func main() {
	root := flag.String("root", ".", "repository root (docs/ is written under it)")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Output files, relative to the repository root.
const (
	referenceFile = "docs/config.md"
	schemaFile    = "docs/simdedge.schema.json"
)

func run(root string) error {
	md, schema, err := generate()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "docs"), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(root, referenceFile), md, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, schemaFile), schema, 0o644)
}
