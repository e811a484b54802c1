package admin

import (
	"strings"
	"testing"

	"github.com/simdedge/simdedge/server/config"
)

// TestRedactCredentials (issue 27): the effective configuration as /config
// renders it hides credentials in header edits, header and query matches,
// fixed responses' headers, and in URLs (userinfo, secret query
// parameters), and keeps what is not a credential.
func TestRedactCredentials(t *testing.T) {
	cfg, err := config.Parse([]byte(`
routes:
  - match:
      path_prefix: /a
      headers: {X-Api-Key: m-apikey, X-Tenant: blue}
      query: {access_token: m-qtoken, page: "2"}
    forward_auth: {url: "http://fa-user:fa-pass@127.0.0.1:9100/auth?token=fa-token&sig=fa-sig&mode=fast#frag"}
    request_headers:
      set: {X-Api-Key: s-apikey, X-Auth-Token: s-authtoken, Proxy-Authorization: "Basic s-proxyauth", X-Client: "{client_ip}"}
      add: {Authorization: "Bearer a-authz", Cookie: "sid=a-cookie", X-Session-Id: a-session}
      remove: [X-Debug]
    response_headers:
      set: {Set-Cookie: "sid=r-setcookie", X-Secret-Thing: r-secret, Server: edge}
    respond: {status: 200, headers: {X-Upstream-Signature: h-sig, Content-Type: text/plain}}
  - match: {path_prefix: /b}
    redirect: {to: "https://{host}/login?next={uri}&client_secret=rd-secret"}
`))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := cfg.WithDefaults().YAML()
	if err != nil {
		t.Fatal(err)
	}
	out, err := Redact(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"m-apikey", "m-qtoken", "fa-user", "fa-pass", "fa-token", "fa-sig", "s-apikey", "s-authtoken",
		"s-proxyauth", "a-authz", "a-cookie", "a-session", "r-setcookie", "r-secret", "h-sig", "rd-secret"} {
		if strings.Contains(string(out), s) {
			t.Errorf("%q not redacted:\n%s", s, out)
		}
	}
	for _, s := range []string{"X-Tenant: blue", "page: \"2\"", "http://(redacted)@127.0.0.1:9100/auth?token=(redacted)&sig=(redacted)&mode=fast#frag",
		"X-Client: '{client_ip}'", "X-Debug", "Server: edge", "Content-Type: text/plain", "https://{host}/login?next={uri}&client_secret=(redacted)"} {
		if !strings.Contains(string(out), s) {
			t.Errorf("%q lost:\n%s", s, out)
		}
	}
}

func TestSecretField(t *testing.T) {
	for _, n := range []string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key", "x-apikey", "X-Auth-Token",
		"X-Amz-Security-Token", "X-Amz-Signature", "X-CSRF-Token", "X-Session-Id", "access_token", "client_secret", "password", "passwd",
		"pwd", "key", "api_key", "sig", "jwt", "Api%5Fkey"} {
		if name := n; !secretField(name) && !secretField(strings.ReplaceAll(name, "%5F", "_")) {
			t.Errorf("%s: not a secret", n)
		}
	}
	for _, n := range []string{"Content-Type", "X-Tenant", "Server", "page", "next", "mode", "monkey", "X-Request-Id", "Cache-Control"} {
		if secretField(n) {
			t.Errorf("%s: a secret", n)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                          "plain",
		"^/a?b":                          "^/a?b",
		"/p?x=1":                         "/p?x=1",
		"/p?token=t&x=1":                 "/p?token=(redacted)&x=1",
		"/p?api%5Fkey=k":                 "/p?api%5Fkey=(redacted)",
		"/p?token":                       "/p?token",
		"https://tok@h/":                 "https://(redacted)@h/",
		"https://u:p@h":                  "https://(redacted)@h",
		"https://h/a@b?c=d":              "https://h/a@b?c=d",
		"http://h/?a=1&password=p#x=pwd": "http://h/?a=1&password=(redacted)#x=pwd",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}
