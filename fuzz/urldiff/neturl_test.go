package urldiff

import (
	neturl "net/url"
	"strings"
	"testing"

	"github.com/simdedge/simdedge/parse/url"
)

// invalidEscape reports a "%" not followed by two hexadecimal digits. The
// URL Standard keeps such bytes as they are (§1.3: "%" not starting a
// percent-encoded byte is left alone; WPT: "http://example.com/foo%"), while
// net/url rejects them ("invalid URL escape").
func invalidEscape(s string) bool {
	hex := func(c byte) bool { return c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f' }
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !hex(s[i+1]) || !hex(s[i+2])) {
			return true
		}
	}
	return false
}

// FuzzAgainstNetURL: every http(s) URL that parse/url accepts serializes
// to an href that net/url (RFC 3986) also accepts, with the same scheme,
// user information, host name, port, path, query and fragment once both
// sides' percent-encoding is undone.
func FuzzAgainstNetURL(f *testing.F) {
	ins, _ := wptCases(f)
	for _, in := range ins {
		f.Add(in)
	}
	for _, u := range corpusURLs("userbait.txt", 200) {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, input string) {
		u, err := url.Parse(input, nil)
		if err != nil {
			return
		}
		scheme := strings.TrimSuffix(u.Protocol(), ":")
		if scheme != "http" && scheme != "https" {
			return // net/url has no notion of special schemes
		}
		href := u.Href()
		if invalidEscape(href) {
			return
		}
		hostname := u.Hostname()
		if strings.ContainsAny(hostname, "!$&'()*+,;=`{}\"") {
			// Sub-delimiters and a few other ASCII bytes are allowed in
			// WHATWG domains (§3.5 forbidden domain code points do not
			// list them); net/url rejects most of them in hosts
			// ("invalid character in host name").
			return
		}
		n, err := neturl.Parse(href)
		if err != nil {
			t.Fatalf("input %q: parse/url href %q rejected by net/url: %v", input, href, err)
		}
		if n.Scheme != scheme {
			t.Fatalf("href %q: scheme %q vs %q", href, n.Scheme, scheme)
		}
		// net/url's Hostname drops IPv6 brackets; WHATWG keeps them.
		if got := n.Hostname(); got != strings.Trim(hostname, "[]") {
			t.Fatalf("href %q: hostname net/url %q, parse/url %q", href, got, hostname)
		}
		if n.Port() != u.Port() {
			t.Fatalf("href %q: port net/url %q, parse/url %q", href, n.Port(), u.Port())
		}
		user, pass := "", ""
		if n.User != nil {
			user = n.User.Username()
			pass, _ = n.User.Password()
		}
		if user != url.PercentDecode(u.Username()) || pass != url.PercentDecode(u.Password()) {
			t.Fatalf("href %q: userinfo net/url %q:%q, parse/url %q:%q", href, user, pass, u.Username(), u.Password())
		}
		if n.Path != url.PercentDecode(u.Pathname()) {
			t.Fatalf("href %q: path net/url %q, parse/url %q", href, n.Path, u.Pathname())
		}
		// An empty query ("?") is "" in the URL Standard's search getter.
		if n.RawQuery != strings.TrimPrefix(u.Search(), "?") {
			t.Fatalf("href %q: query net/url %q, parse/url %q", href, n.RawQuery, u.Search())
		}
		if n.Fragment != url.PercentDecode(strings.TrimPrefix(u.Hash(), "#")) {
			t.Fatalf("href %q: fragment net/url %q, parse/url %q", href, n.Fragment, u.Hash())
		}
	})
}
