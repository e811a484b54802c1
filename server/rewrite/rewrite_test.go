package rewrite

import (
	"bytes"
	"errors"
	"regexp"
	"testing"

	phttp "github.com/simdedge/simdedge/parse/http"
)

func testEnv() *Env {
	re := regexp.MustCompile(`^/api/(v[0-9]+)/(x)?`)
	path := []byte("/api/v2/users")
	return &Env{
		RemoteAddr: []byte("192.0.2.1"), ClientIP: []byte("198.51.100.7"), Host: []byte("example.com"),
		Scheme: []byte("https"), RequestID: []byte("id-1"), Path: path, Query: []byte("a=1&b"), HasQuery: true,
		Caps: re.FindSubmatchIndex(path), CapSrc: path,
	}
}

func TestTemplate(t *testing.T) {
	e := testEnv()
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"", ""},
		{"{remote_addr} {client_ip} {host} {scheme} {request_id}", "192.0.2.1 198.51.100.7 example.com https id-1"},
		{"{scheme}://{host}{path}", "https://example.com/api/v2/users"},
		{"{uri}|{query}", "/api/v2/users?a=1&b|a=1&b"},
		{"{0}-{1}-{2}", "/api/v2/-v2-"}, // group 2 did not take part
		{"{{literal}} }", "{literal}} }"},
		{"tab\there", "tab\there"},
	} {
		tm, err := ParseTemplate(tc.in)
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if got := string(tm.Append(nil, e)); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.in, got, tc.want)
		}
		if tm.String() != tc.in {
			t.Errorf("String %q", tm.String())
		}
	}
	e.HasQuery = false
	uri := MustTemplate("{uri}")
	if got := string(uri.Append(nil, e)); got != "/api/v2/users" {
		t.Errorf("{uri} without query: %q", got)
	}
	for _, tc := range []struct {
		in  string
		err error
	}{
		{"{nope}", ErrUnknownVar}, {"{host", ErrUnclosed}, {"{}", ErrUnknownVar}, {"{01}", ErrUnknownVar},
		{"{100}", ErrUnknownVar}, {"{-1}", ErrUnknownVar}, {"a\r\nb", ErrLiteral}, {"a\x00", ErrLiteral}, {"\x7f", ErrLiteral},
	} {
		if _, err := ParseTemplate(tc.in); !errors.Is(err, tc.err) {
			t.Errorf("%q: %v, want %v", tc.in, err, tc.err)
		}
	}
	tm := MustTemplate("/{2}")
	if tm.MaxCapture() != 2 || tm.CheckCaptures(1) != ErrCapture || tm.CheckCaptures(-1) != ErrNoRegex || tm.CheckCaptures(2) != nil {
		t.Errorf("captures: max %d", tm.MaxCapture())
	}
	var zero Template
	if zero.MaxCapture() != -1 || zero.CheckCaptures(-1) != nil {
		t.Error("the zero Template names a capture")
	}
}

// TestUnsafeExpansion: a capture (or any variable) holding CR, LF or NUL
// never reaches a value or a URI: the expansion fails and leaves dst as
// it was.
func TestUnsafeExpansion(t *testing.T) {
	e := testEnv()
	src := []byte("/x\r\nSet-Cookie: a=b")
	e.Caps, e.CapSrc = []int{0, len(src), 2, len(src)}, src
	tm := MustTemplate("v={1}")
	dst := []byte("keep")
	got, err := tm.AppendValue(dst, e)
	if err != ErrUnsafe || string(got) != "keep" {
		t.Errorf("AppendValue: %q, %v", got, err)
	}
	if got, err := tm.AppendURI(dst, e); err != ErrUnsafe || string(got) != "keep" {
		t.Errorf("AppendURI: %q, %v", got, err)
	}
	e.Host = []byte("a b")
	ht := MustTemplate("//{host}")
	if _, err := ht.AppendURI(nil, e); err != ErrUnsafe {
		t.Errorf("space in a URI: %v", err)
	}
	if got, err := ht.AppendValue(nil, e); err != nil || string(got) != "//a b" {
		t.Errorf("space in a value: %q %v", got, err)
	}
}

func TestPathRewrite(t *testing.T) {
	e := testEnv()
	strip, _ := StripPrefix("/api")
	repl, _ := ReplacePrefix("/a/", "/b/")
	rx, err := RegexReplace(regexp.MustCompile(`^/old/([a-z]+)`), "/new/{1}")
	if err != nil {
		t.Fatal(err)
	}
	whole, _ := RegexReplace(regexp.MustCompile(`^/p/(.*)$`), "{1}")
	for _, tc := range []struct {
		p        *PathRewrite
		in, want string
		ok       bool
	}{
		{strip, "/api/users", "/users", true},
		{strip, "/api", "/", true},
		{strip, "/apix", "/x", true},
		{strip, "/other", "", false},
		{repl, "/a/x/y", "/b/x/y", true},
		{repl, "/a", "", false},
		{rx, "/old/abc/def", "/new/abc/def", true},
		{rx, "/old/", "", false},
		{whole, "/p/q/r", "/q/r", true},
		{whole, "/p/", "/", true},
		{whole, "/p/x", "/x", true},
	} {
		got, ok, err := tc.p.Append([]byte("pre"), []byte(tc.in), e)
		if err != nil || ok != tc.ok || ok && string(got) != "pre"+tc.want || !ok && string(got) != "pre" {
			t.Errorf("%q: %q %v %v, want %q %v", tc.in, got, ok, err, tc.want, tc.ok)
		}
	}
	for _, p := range []string{"", "api", "/a?b", "/a#", "/a b"} {
		if _, err := StripPrefix(p); err != ErrPrefix {
			t.Errorf("StripPrefix(%q): %v", p, err)
		}
	}
	for _, to := range []string{"/{1}?x", "/a b", "/{query}", "/{uri}", "/#"} {
		if _, err := RegexReplace(regexp.MustCompile(`(a)`), to); err != ErrPathTo {
			t.Errorf("RegexReplace to %q: %v", to, err)
		}
	}
	if _, err := RegexReplace(regexp.MustCompile(`(a)`), "/{2}"); err != ErrCapture {
		t.Errorf("capture out of range: %v", err)
	}
	// A variable cannot smuggle a control byte or a '?' into the path.
	hosty, _ := RegexReplace(regexp.MustCompile(`^/h`), "/{host}")
	e.Host = []byte("a?b")
	if got, _, err := hosty.Append(nil, []byte("/h"), e); err != ErrUnsafe || len(got) != 0 {
		t.Errorf("'?' through {host}: %q %v", got, err)
	}
}

func TestHeaderOps(t *testing.T) {
	e := testEnv()
	ops, err := NewHeaderOps(RequestSide,
		[]Field{{Name: "X-Client", Value: MustTemplate("{client_ip}")}, {Name: "Host", Value: MustTemplate("backend")}},
		[]Field{{Name: "X-Version", Value: MustTemplate("{1}")}},
		[]string{"x-debug"})
	if err != nil {
		t.Fatal(err)
	}
	hs := phttp.Headers{{Name: []byte("Host"), Value: []byte("front")}, {Name: []byte("X-Debug"), Value: []byte("1")},
		{Name: []byte("X-Client"), Value: []byte("spoofed")}, {Name: []byte("Accept"), Value: []byte("*/*")}, {Name: []byte("X-DEBUG"), Value: []byte("2")}}
	out, buf, err := ops.Edit(hs, nil, e)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range out {
		got = append(got, string(h.Name)+": "+string(h.Value))
	}
	want := []string{"Accept: */*", "X-Client: 198.51.100.7", "Host: backend", "X-Version: v2"}
	if len(got) != len(want) {
		t.Fatalf("%q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q, want %q", got, want)
		}
	}
	if !bytes.Contains(buf, []byte("198.51.100.7")) {
		t.Errorf("buf %q", buf)
	}
	resp, err := NewHeaderOps(ResponseSide, []Field{{Name: "X-A", Value: MustTemplate("{host}")}}, []Field{{Name: "X-B", Value: MustTemplate("b")}}, []string{"Server"})
	if err != nil {
		t.Fatal(err)
	}
	lines, err := resp.AppendLines(nil, e)
	if err != nil || string(lines) != "X-A: example.com\r\nX-B: b\r\n" {
		t.Errorf("lines %q %v", lines, err)
	}
	if d := resp.Dropped(); len(d) != 2 || d[0] != "X-A" || d[1] != "Server" {
		t.Errorf("dropped %q", d)
	}
	for _, tc := range []struct {
		side      Side
		set, add  string
		remove    string
		wantError error
	}{
		{RequestSide, "Content-Length", "", "", ErrReserved},
		{RequestSide, "", "X-Forwarded-For", "", ErrReserved},
		{RequestSide, "", "", "connection", ErrReserved},
		{RequestSide, "", "Host", "", ErrHostOp},
		{RequestSide, "", "", "Host", ErrHostOp},
		{ResponseSide, "Date", "", "", ErrReserved},
		{ResponseSide, "", "", "Transfer-Encoding", ErrReserved},
		{ResponseSide, "X A", "", "", ErrName},
		{ResponseSide, "", "", "", nil},
		{ResponseSide, "Host", "", "", nil},
	} {
		var set, add []Field
		var remove []string
		if tc.set != "" {
			set = []Field{{Name: tc.set}}
		}
		if tc.add != "" {
			add = []Field{{Name: tc.add}}
		}
		if tc.remove != "" {
			remove = []string{tc.remove}
		}
		if _, err := NewHeaderOps(tc.side, set, add, remove); err != tc.wantError {
			t.Errorf("%+v: %v", tc, err)
		}
	}
}

// TestEditAllocs: expanding and editing into reused buffers allocates
// nothing.
func TestEditAllocs(t *testing.T) {
	e := testEnv()
	ops, _ := NewHeaderOps(RequestSide, []Field{{Name: "X-Client", Value: MustTemplate("{client_ip} {host}")}}, nil, []string{"X-Debug"})
	strip, _ := StripPrefix("/api")
	base := phttp.Headers{{Name: []byte("Host"), Value: []byte("front")}, {Name: []byte("X-Debug"), Value: []byte("1")}}
	hs := make(phttp.Headers, 0, 8)
	buf := make([]byte, 0, 256)
	path := []byte("/api/x")
	n := testing.AllocsPerRun(100, func() {
		hs = append(hs[:0], base...)
		b, _, _ := strip.Append(buf[:0], path, e)
		_, _, _ = ops.Edit(hs, b, e)
	})
	if n != 0 {
		t.Errorf("%v allocations per edit", n)
	}
}
