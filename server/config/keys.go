package config

import (
	"maps"
	"slices"

	"github.com/simdedge/simdedge/server/config/internal/keyhook"
	"go.yaml.in/yaml/v3"
)

// reportKeys tells keyhook.Seen (set only by gendoc's tests) which keys
// the decoder accepts in the section at path, so that a key read here but
// missing from the config types, and so from docs/config.md, fails a test.
func reportKeys(path string, known map[string]func(*yaml.Node, string)) {
	if keyhook.Seen != nil {
		keyhook.Seen(path, slices.Collect(maps.Keys(known)))
	}
}
