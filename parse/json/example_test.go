package json_test

import (
	"fmt"

	"github.com/simdedge/simdedge/parse/json"
)

func Example() {
	body := []byte(`{"statuses":[{"id":505874924095815681,"user":{"screen_name":"ayuu0123"}},
		{"id":505874922023837696,"user":{"screen_name":"yuttari1998"}}]}`)
	p := json.NewParser(json.Options{}) // keep one per goroutine and reuse it
	doc, err := p.Parse(body)
	if err != nil {
		fmt.Println(err)
		return
	}
	statuses, _ := doc.Root().Key("statuses")
	it, _ := statuses.Array()
	for it.Next() {
		id, _ := it.Value().Get("id")
		n, _ := id.Uint()
		name, _ := it.Value().Get("user", "screen_name")
		view, _ := name.View() // zero-copy: no escapes in this string
		fmt.Println(n, string(view))
	}
	// Output:
	// 505874924095815681 ayuu0123
	// 505874922023837696 yuttari1998
}

func ExampleValue_AppendString() {
	p := json.NewParser(json.Options{})
	doc, _ := p.Parse([]byte(`{"greeting":"caf\u00e9 \"ol\u00e9\""}`))
	v, _ := doc.Root().Key("greeting")
	_, ok := v.View()
	buf, _ := v.AppendString(nil) // reuse buf across calls to avoid allocation
	fmt.Println(ok, string(buf))
	// Output: false café "olé"
}

func ExampleParser_ParseND() {
	p := json.NewParser(json.Options{})
	doc, _ := p.ParseND([]byte("{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"))
	sum := int64(0)
	roots := doc.Roots()
	for roots.Next() {
		v, _ := roots.Value().Key("n")
		n, _ := v.Int()
		sum += n
	}
	fmt.Println(sum)
	// Output: 6
}

func ExampleError() {
	p := json.NewParser(json.Options{})
	_, err := p.Parse([]byte(`{"a":[1,2,]}`))
	fmt.Println(err)
	// Output: json: parse: unexpected byte at offset 10
}

func ExampleValue_Object() {
	p := json.NewParser(json.Options{})
	doc, _ := p.Parse([]byte(`{"b":true,"a":null,"c":-1.5e3}`))
	it, _ := doc.Root().Object()
	for it.Next() {
		k, _ := it.Key().View()
		fmt.Println(string(k), it.Value().Kind())
	}
	// Output:
	// b bool
	// a null
	// c number
}
