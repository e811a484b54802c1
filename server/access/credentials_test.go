package access

import (
	"testing"

	phttp "github.com/simdedge/simdedge/parse/http"
)

func TestCredentials(t *testing.T) {
	f := func(name, value string) phttp.Header { return phttp.Header{Name: []byte(name), Value: []byte(value)} }
	for _, tc := range []struct {
		hs     phttp.Headers
		want   string
		single bool
	}{
		{nil, "", true},
		{phttp.Headers{f("Host", "h")}, "", true},
		{phttp.Headers{f("Host", "h"), f("authorization", "Basic a")}, "Basic a", true},
		{phttp.Headers{f("Authorization", "Basic a"), f("X", "y"), f("AUTHORIZATION", "Basic b")}, "Basic a", false},
		{phttp.Headers{f("Authorization", "Basic a"), f("Authorization", "Basic a")}, "Basic a", false},
		// Proxy-Authorization is another field: not counted.
		{phttp.Headers{f("Authorization", "Basic a"), f("Proxy-Authorization", "Basic b")}, "Basic a", true},
	} {
		v, single := Credentials(tc.hs)
		if string(v) != tc.want || single != tc.single {
			t.Errorf("%v: %q %v, want %q %v", tc.hs, v, single, tc.want, tc.single)
		}
	}
	hs := phttp.Headers{f("Authorization", "Basic a"), f("Authorization", "Basic b")}
	if n := testing.AllocsPerRun(100, func() { Credentials(hs) }); n != 0 {
		t.Errorf("Credentials allocates %v times", n)
	}
}
