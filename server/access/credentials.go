package access

import phttp "github.com/simdedge/simdedge/parse/http"

// authorizationName is the field that carries a client's credentials
// (RFC 9110 §11.6.2).
const authorizationName = "Authorization"

// Credentials returns the request's Authorization value (nil if absent)
// and whether the request is unambiguous about it: false when the field
// appears more than once. Authorization is a singleton field (RFC 9110
// §11.6.2: its value is one set of credentials, not a list), and the
// edge checks one copy while the backend or an auth service may read
// another: Basic auth checks the first, Go's net/http reads the first,
// other servers keep the last. So a gated route must refuse such a
// request (400, as nginx does for repeated singleton fields) instead of
// forwarding credentials nobody verified. In HTTP/2 two `authorization`
// fields reach here as two entries too (only cookie crumbs are joined).
// It allocates nothing.
func Credentials(hs phttp.Headers) (authz []byte, single bool) {
	i := hs.Index(authorizationName, 0)
	if i < 0 {
		return nil, true
	}
	return hs[i].Value, hs.Index(authorizationName, i+1) < 0
}
