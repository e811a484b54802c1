package admin

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// redacted replaces a secret's value in /config.
const redacted = "(redacted)"

// secretWords name the keys whose values are secrets: a key is secret when
// it is one of these or ends in "_" and one of these (client_secret,
// basic_auth_hash). Paths to key files are not secrets (the file's
// permissions guard it), so "key" alone is not in the list, but private
// key material written inline would be under private_key.
var secretWords = []string{"password", "passwd", "secret", "token", "hash", "hashes", "private_key", "api_key", "credentials", "authorization", "cookie"}

// secretKey reports whether a mapping key names a secret.
func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, w := range secretWords {
		if k == w || strings.HasSuffix(k, "_"+w) {
			return true
		}
	}
	return false
}

// Redact returns the YAML document doc with the value of every secret key
// replaced (a mapping or list under such a key is replaced whole).
func Redact(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	redactNode(&root)
	return yaml.Marshal(&root)
}

func redactNode(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			redactNode(c)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if secretKey(k.Value) {
				*v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: redacted}
				continue
			}
			if k.Value == "basic_auth" && v.Kind == yaml.MappingNode {
				// basic_auth.users maps names (kept) to bcrypt
				// hashes (redacted).
				for j := 0; j+1 < len(v.Content); j += 2 {
					if u := v.Content[j+1]; v.Content[j].Value == "users" && u.Kind == yaml.MappingNode {
						for h := 1; h < len(u.Content); h += 2 {
							*u.Content[h] = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: redacted}
						}
					}
				}
			}
			redactNode(v)
		}
	}
}
