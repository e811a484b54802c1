package router

import (
	"testing"

	"github.com/simdedge/simdedge/server"
)

// TestHostForms: a host matches whatever its spelling: a trailing dot
// (the fully qualified name), case, a port, an absolute-form target's
// authority (which wins over Host); a pattern written with a trailing dot
// is the same pattern (issue 18, item 4).
func TestHostForms(t *testing.T) {
	tab, err := New([]Route{
		{Match: Match{Host: "admin.internal"}, Handler: named("admin")},
		{Match: Match{Host: "fqdn.example."}, Handler: named("fqdn")},
		{Match: Match{Host: "*.example.com"}, Handler: named("wild")},
		{Match: Match{Host: "[::1]"}, Handler: named("v6")},
		{Handler: named("rest")},
	})
	if err != nil {
		t.Fatal(err)
	}
	l := serve(t, tab)
	for _, tc := range []struct{ target, host, want string }{
		{"/", "admin.internal", "admin"},
		{"/", "admin.internal.", "admin"},
		{"/", "ADMIN.INTERNAL.", "admin"},
		{"/", "admin.internal:8080", "admin"},
		{"/", "admin.internal.:8080", "admin"},
		{"/", "admin.internal..", "rest"},
		{"/", "xadmin.internal", "rest"},
		{"/", "fqdn.example", "fqdn"},
		{"/", "fqdn.example.", "fqdn"},
		{"/", "a.example.com.", "wild"},
		{"/", "a.b.example.com.:443", "wild"},
		{"/", "example.com.", "rest"},
		{"/", "[::1]:8080", "v6"},
		{"http://admin.internal./x", "public.example", "admin"},
		{"http://public.example/x", "admin.internal", "rest"},
		{"http://admin.internal:81/x", "public.example", "admin"},
	} {
		_, body := exchange(t, l, "GET "+tc.target+" HTTP/1.1\r\nHost: "+tc.host+"\r\n\r\n")
		if body != tc.want {
			t.Errorf("GET %s, Host %s: routed to %q, want %q", tc.target, tc.host, body, tc.want)
		}
	}
	for _, bad := range []string{".", "a..", "*.example.com.."} {
		if _, err := New([]Route{{Match: Match{Host: bad}, Handler: named("x")}}); err != ErrBadHost {
			t.Errorf("pattern %q: %v, want ErrBadHost", bad, err)
		}
	}
}

// TestSpecialTargets: "OPTIONS *" is answered (200, Allow, no body) and
// CONNECT refused (501, connection closed) instead of being routed, even
// where a catch-all route exists (issue 18, item 9).
func TestSpecialTargets(t *testing.T) {
	tab, err := New([]Route{{Handler: named("rest")}})
	if err != nil {
		t.Fatal(err)
	}
	l := serve(t, tab)
	resp, body := exchange(t, l, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
	if resp.StatusCode != 200 || resp.Header.Get("Allow") != server.AllowedMethods || resp.ContentLength != 0 || body != "" {
		t.Errorf("OPTIONS *: %d Allow %q length %d body %q", resp.StatusCode, resp.Header.Get("Allow"), resp.ContentLength, body)
	}
	resp, _ = exchange(t, l, "CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n")
	if resp.StatusCode != 501 || !resp.Close {
		t.Errorf("CONNECT: %d close=%v, want 501 and close", resp.StatusCode, resp.Close)
	}
	// An OPTIONS on a resource is routed as any request.
	if _, body := exchange(t, l, "OPTIONS /x HTTP/1.1\r\nHost: x\r\n\r\n"); body != "rest" {
		t.Errorf("OPTIONS /x: %q", body)
	}
}
