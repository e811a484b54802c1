package compress

import "github.com/simdedge/simdedge/internal/ascii"

// Accept-Encoding negotiation (RFC 9110 §12.5.3).

// qScale is the precision of a qvalue: at most three decimals (§12.4.2),
// so qualities are compared as integers 0..1000.
const qScale = 1000

// qUnset marks a coding the field does not name.
const qUnset = -1

// choose returns the index in codings of the coding the client prefers
// among those configured (the highest qvalue above 0; ties go to the
// earlier one in codings), or -1 for identity. A coding the field does not
// name takes the quality of "*" when present, else it is not acceptable.
// An absent or empty field gets identity: RFC 9110 allows any coding
// then, but clients that send nothing (curl without --compressed, probes)
// expect the body as is, as nginx and Caddy assume too. "identity;q=0"
// without an acceptable coding is still answered with identity rather
// than 406 (§12.5.3 allows either).
func choose(ae []byte, codings []coding) int {
	var q [maxCodings]int
	for i := range codings {
		q[i] = qUnset
	}
	star := qUnset
	for len(ae) > 0 {
		var item []byte
		item, ae = nextItem(ae)
		name, quality, ok := parseItem(item)
		if !ok {
			continue
		}
		if string(name) == "*" {
			star = quality
			continue
		}
		for i, c := range codings {
			if ascii.EqualFold(name, c.name) || c.name == "gzip" && ascii.EqualFold(name, "x-gzip") {
				if q[i] == qUnset {
					q[i] = quality
				}
			}
		}
	}
	best, bestQ := -1, 0
	for i := range codings {
		qi := q[i]
		if qi == qUnset {
			qi = star
		}
		if qi > bestQ {
			best, bestQ = i, qi
		}
	}
	return best
}

// nextItem splits the first comma-separated element off ae.
func nextItem(ae []byte) (item, rest []byte) {
	for i, c := range ae {
		if c == ',' {
			return ae[:i], ae[i+1:]
		}
	}
	return ae, nil
}

// parseItem reads `coding *( OWS ";" OWS "q=" qvalue )`; a malformed
// element is skipped (ok false), and a missing qvalue means 1.
func parseItem(item []byte) (name []byte, q int, ok bool) {
	item = ascii.TrimOWS(item)
	end := 0
	for end < len(item) && item[end] != ';' && item[end] != ' ' && item[end] != '\t' {
		end++
	}
	name = item[:end]
	if len(name) == 0 {
		return nil, 0, false
	}
	q = qScale
	rest := item[end:]
	for len(rest) > 0 {
		rest = ascii.TrimOWS(rest)
		if len(rest) == 0 || rest[0] != ';' {
			return nil, 0, false
		}
		rest = ascii.TrimOWS(rest[1:])
		end := 0
		for end < len(rest) && rest[end] != ';' {
			end++
		}
		param := ascii.TrimOWS(rest[:end])
		rest = rest[end:]
		if len(param) >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=' {
			v, good := parseQ(param[2:])
			if !good {
				return nil, 0, false
			}
			q = v
		}
	}
	return name, q, true
}

// parseQ parses a qvalue: "0" [ "." 0*3DIGIT ] / "1" [ "." 0*3("0") ].
func parseQ(b []byte) (int, bool) {
	if len(b) == 0 || b[0] != '0' && b[0] != '1' {
		return 0, false
	}
	v := int(b[0]-'0') * qScale
	if len(b) == 1 {
		return v, true
	}
	if b[1] != '.' || len(b) > 5 {
		return 0, false
	}
	scale := qScale / 10
	for _, c := range b[2:] {
		if c < '0' || c > '9' {
			return 0, false
		}
		v += int(c-'0') * scale
		scale /= 10
	}
	if v > qScale {
		return 0, false
	}
	return v, true
}
