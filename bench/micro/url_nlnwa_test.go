package micro

import whatwgurl "github.com/nlnwa/whatwg-url/url"

func init() {
	urlImpls = append(urlImpls, urlImpl{"nlnwa", func() (func(string) bool, func()) {
		return func(s string) bool { _, err := whatwgurl.Parse(s); return err == nil }, func() {}
	}})
}
