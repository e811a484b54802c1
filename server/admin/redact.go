package admin

import (
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"
)

// What /config hides (docs/guide-operations.md, "Admin listener and
// metrics"), in three parts, each written once here:
//
//  1. Secret keys: a mapping key that is one of secretWords or ends in "_"
//     and one of them (client_secret, password_hash). basic_auth.users
//     keeps the user names and hides their hashes.
//  2. Credential-like field names: in a mapping that names header fields
//     or query parameters (the values of the keys in fieldMaps:
//     request_headers/response_headers set and add, match.headers,
//     match.query, respond.headers), the value of a name secretField
//     accepts.
//  3. URLs in any value: the userinfo of an absolute URL (user:password@,
//     or a token as the user name) and the value of every query parameter
//     whose name secretField accepts, in an absolute URL or a path.
//
// Over-redacting costs a reader a value; under-redacting leaks a secret to
// whoever reaches the admin listener, so the name rules are wide.

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

// fieldMaps are the configuration keys whose values map header field
// names or query parameter names to values (or to matchers).
var fieldMaps = map[string]bool{"set": true, "add": true, "headers": true, "query": true}

// secretFieldParts: a field or parameter name containing one of these
// (case-insensitive, '-' read as '_') carries a credential: Authorization,
// Proxy-Authorization, X-Auth-Token, Cookie, Set-Cookie, X-Session-Id,
// X-Amz-Signature, access_token, client_secret, password, passwd, pwd,
// X-Api-Key (apikey)...
var secretFieldParts = []string{"auth", "token", "secret", "passw", "pwd", "apikey", "api_key", "signature", "credential", "session", "cookie"}

// secretFieldWords: a name with one of these as a whole '_'- or
// '-'-separated word also does: key (X-Api-Key, key=, access-key), sig
// (sig=, Azure SAS), pass, jwt.
var secretFieldWords = []string{"key", "sig", "pass", "jwt"}

// secretField reports whether a header field or query parameter name
// carries credentials.
func secretField(name string) bool {
	n := strings.ReplaceAll(strings.ToLower(name), "-", "_")
	for _, p := range secretFieldParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	for _, w := range strings.Split(n, "_") {
		for _, s := range secretFieldWords {
			if w == s {
				return true
			}
		}
	}
	return false
}

// Redact returns the YAML document doc with every secret hidden by the
// rule above (a mapping or list under a secret key is replaced whole).
func Redact(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, err
	}
	redactNode(&root)
	return yaml.Marshal(&root)
}

func hide(n *yaml.Node) { *n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: redacted} }

func redactNode(n *yaml.Node) {
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			redactNode(c)
		}
	case yaml.ScalarNode:
		if n.Tag == "!!str" || n.Tag == "" {
			n.Value = redactURL(n.Value)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if secretKey(k.Value) {
				hide(v)
				continue
			}
			if fieldMaps[k.Value] && v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					if secretField(v.Content[j].Value) {
						hide(v.Content[j+1])
					}
				}
			}
			if k.Value == "basic_auth" && v.Kind == yaml.MappingNode {
				// basic_auth.users maps names (kept) to bcrypt
				// hashes (redacted).
				for j := 0; j+1 < len(v.Content); j += 2 {
					if u := v.Content[j+1]; v.Content[j].Value == "users" && u.Kind == yaml.MappingNode {
						for h := 1; h < len(u.Content); h += 2 {
							hide(u.Content[h])
						}
					}
				}
			}
			redactNode(v)
		}
	}
}

// redactURL hides the userinfo of an absolute URL and the values of
// secret query parameters of an absolute URL or a path; any other string
// comes back as it is. It edits the text in place rather than re-encoding
// a parsed URL, so what is shown is what was configured (templates such
// as {host} included).
func redactURL(s string) string {
	rest := s
	var b strings.Builder
	if i := strings.Index(s, "://"); i > 0 {
		auth := i + len("://")
		end := len(s)
		if j := strings.IndexAny(s[auth:], "/?#"); j >= 0 {
			end = auth + j
		}
		if at := strings.LastIndexByte(s[auth:end], '@'); at >= 0 {
			b.WriteString(s[:auth])
			b.WriteString(redacted)
			rest = s[auth+at:]
		}
	} else if !strings.HasPrefix(s, "/") {
		return s
	}
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		if b.Len() == 0 {
			return s
		}
		b.WriteString(rest)
		return b.String()
	}
	b.WriteString(rest[:q+1])
	query, frag := rest[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	for i, p := range strings.Split(query, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		name, _, hasValue := strings.Cut(p, "=")
		if dec, err := url.QueryUnescape(name); err == nil {
			name = dec
		}
		if hasValue && secretField(name) {
			b.WriteString(p[:strings.IndexByte(p, '=')+1])
			b.WriteString(redacted)
			continue
		}
		b.WriteString(p)
	}
	b.WriteString(frag)
	return b.String()
}
