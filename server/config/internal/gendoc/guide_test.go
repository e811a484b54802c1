package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaValidatesGuideBlocks: the yaml blocks of the README and the
// operator's guide (docs/guide*.md) are fragments, which simdedge check
// cannot take whole (a route's upstream, a certificate file may be
// elsewhere), but each one's keys, types and values must be ones the
// configuration has, so a renamed key or a stale default value in the
// prose fails here. The README's complete blocks are also checked whole
// (cmd/simdedge TestReadmeConfigs).
func TestSchemaValidatesGuideBlocks(t *testing.T) {
	schema := loadSchema(t)
	files, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "guide*.md"))
	files = append(files, filepath.Join(repoRoot, "README.md"))
	n := 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for line, block := range yamlBlocks(string(src)) {
			n++
			if !strings.HasPrefix(block, "routes:") && !strings.Contains(block, "\nroutes:") {
				// A fragment about other keys: routes are required.
				block += "routes: []\n"
			}
			for _, err := range validateYAML(t, schema, []byte(block)) {
				t.Errorf("%s:%d: %v", filepath.Base(f), line, err)
			}
		}
	}
	if n < 15 {
		t.Errorf("found %d yaml blocks in the README and the guide; is the guide missing?", n)
	}
}

// TestSchemaGuideBlocksBite: a fragment with a misspelt key is refused.
func TestSchemaGuideBlocksBite(t *testing.T) {
	blocks := yamlBlocks("text\n```yaml\nupstreams:\n  - name: api\n    targets: [\"h:1\"]\n    balanse: p2c\n```\n")
	if len(blocks) != 1 {
		t.Fatalf("found %d blocks, want 1", len(blocks))
	}
	for _, b := range blocks {
		if len(validateYAML(t, loadSchema(t), []byte(b))) == 0 {
			t.Error("a misspelt key passed")
		}
	}
}

// yamlBlocks returns the fenced yaml blocks of a Markdown page by the
// line their fence opens on.
func yamlBlocks(doc string) map[int]string {
	out := map[int]string{}
	lines := strings.Split(doc, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "```yaml") {
			continue
		}
		open := i + 1
		var b strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			b.WriteString(lines[i])
			b.WriteByte('\n')
		}
		out[open] = b.String()
	}
	return out
}
