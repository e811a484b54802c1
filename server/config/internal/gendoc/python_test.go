package main

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// pythonCheck validates the schema against the draft-07 metaschema and the
// given files against the schema with Python's jsonschema (an independent
// implementation), reading YAML as YAML 1.2 does: only true and false are
// booleans (PyYAML's 1.1 rules would read the key `on` as true).
const pythonCheck = `
import json, re, sys, yaml, jsonschema
class L(yaml.SafeLoader): pass
L.yaml_implicit_resolvers = {k: [(t, r) for t, r in v if t != 'tag:yaml.org,2002:bool']
                             for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
L.add_implicit_resolver('tag:yaml.org,2002:bool', re.compile(r'^(?:true|True|TRUE|false|False|FALSE)$'), list('tTfF'))
schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
v = jsonschema.Draft7Validator(schema)
bad = 0
for f in sys.argv[2:]:
    for e in v.iter_errors(yaml.load(open(f), Loader=L)):
        print(f, list(e.absolute_path), e.message); bad += 1
sys.exit(1 if bad else 0)
`

// TestSchemaPythonJSONSchema cross-checks the schema with a second
// validator where one is installed (Debian's python3-jsonschema).
func TestSchemaPythonJSONSchema(t *testing.T) {
	if exec.Command("python3", "-c", "import jsonschema, yaml").Run() != nil {
		t.Skip("python3 with jsonschema and yaml is not installed (apt install python3-jsonschema python3-yaml); TestSchemaValidatesConfigs still runs")
	}
	files, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*.yaml"))
	files = append(files, filepath.Join(repoRoot, "cmd", "simdedge", "default.yaml"))
	args := append([]string{"-c", pythonCheck, filepath.Join(repoRoot, schemaFile)}, files...)
	out, err := exec.Command("python3", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 jsonschema: %v\n%s", err, out)
	}
}
