package url_test

import (
	"errors"
	"fmt"

	"github.com/simdedge/simdedge/parse/url"
)

func ExampleParse() {
	u, err := url.Parse("HTTPS://user:pa ss@EXAMPLE.com:443/a/./b/../c?q=1#frag", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Href())
	fmt.Println(u.Protocol(), u.Username(), u.Password(), u.Host(), u.Pathname(), u.Search(), u.Hash())
	fmt.Println(u.Origin())
	// Output:
	// https://user:pa%20ss@example.com/a/c?q=1#frag
	// https: user pa%20ss example.com /a/c ?q=1 #frag
	// https://example.com
}

func ExampleParse_base() {
	base, _ := url.Parse("http://example.org/dir/page?x", nil)
	u, _ := url.Parse("../other\\file#top", base)
	fmt.Println(u.Href())
	// Output: http://example.org/other/file#top
}

func ExampleParse_error() {
	_, err := url.Parse("http://example.com:99999/", nil)
	fmt.Println(err, errors.Is(err, url.ErrInvalidPort))
	// Output: parse: url: invalid port true
}

func ExampleParseValue() {
	// URLs kept by value, as in a slice of routes: no allocation for an
	// input already in serialized form, one (the href) for the others.
	var urls []url.URL
	for _, s := range []string{"https://a.example/x?q=1", "HTTP://B.example"} {
		u, err := url.ParseValue(s, nil)
		if err != nil {
			fmt.Println(err)
			continue
		}
		urls = append(urls, u)
	}
	for i := range urls {
		fmt.Println(urls[i].Href(), urls[i].Hostname())
	}
	// Output:
	// https://a.example/x?q=1 a.example
	// http://b.example/ b.example
}

func ExampleParseInto() {
	var u url.URL // reused: no allocations once its buffers have grown
	for _, s := range []string{"https://a.example/x", "http://[::FFFF:192.168.0.1]/", "http://0x7f.1/"} {
		if err := url.ParseInto(&u, s, nil); err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(u.Hostname())
	}
	// Output:
	// a.example
	// [::ffff:c0a8:1]
	// 127.0.0.1
}

func ExampleURL_SetHost() {
	u, _ := url.Parse("https://example.com/path", nil)
	_ = u.SetHost("EXAMPLE.net:8443")
	_ = u.SetPathname("/a b")
	_ = u.SetSearch("?q=x y")
	fmt.Println(u.Href())
	// Output: https://example.net:8443/a%20b?q=x%20y
}

func ExampleSearchParams() {
	p := url.ParseSearchParams("?b=2&a=1&b=3&c=%20x+y")
	v, _ := p.Get("c")
	fmt.Printf("%q %v\n", v, p.GetAll("b"))
	p.Append("d", "é&")
	p.Delete("a")
	p.Sort()
	fmt.Println(p.String())
	for name, value := range p.All() {
		fmt.Print(name, "=", value, " ")
	}
	fmt.Println()
	// Output:
	// " x y" [2 3]
	// b=2&b=3&c=+x+y&d=%C3%A9%26
	// b=2 b=3 c= x y d=é&
}

func ExampleCanParse() {
	base, _ := url.Parse("https://example.com/", nil)
	fmt.Println(url.CanParse("/relative", nil), url.CanParse("/relative", base), url.CanParse("http://[::1", nil))
	// Output: false true false
}

func ExampleURL_SearchParams() {
	u, _ := url.Parse("https://example.com/search?q=go+url&page=2", nil)
	q, _ := u.SearchParams().Get("q")
	fmt.Println(q)
	// Output: go url
}
