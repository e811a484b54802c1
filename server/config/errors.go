package config

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// One error per mistake. The decoder reads each value into a field and
// leaves the field as it was (its zero value, or the bad text of a string)
// when the value is wrong. Checks that run later judge those fields: a
// range check, a "missing" check, a cross-field check, the pool's own
// checks in validate. On a field that failed they judge a value the
// operator never wrote, and their errors are false ("rate: missing" after
// "rate: must be a number"). Two rules drop such consequences, so that no
// check needs to know which of its inputs failed:
//
//   - A value with an error gets no further error, nor does any value
//     inside it (dropped in fail: the key is the failed key or under it).
//   - A check that runs after a mapping was read judges that mapping's
//     values, so its errors are dropped when reading the mapping (or a
//     mapping around it) failed anywhere. Dirtiness is taken when the
//     mapping's keys have all been read, so independent mistakes read in
//     one pass (two bad values side by side) are all reported, and one
//     check's error does not hide the next check's. The document's own
//     mapping counts only for top-level checks (proxy_on_loop, "at least
//     one route"), or one typo anywhere would hide every other check.
//
// Checks that read a value outside their own mapping (a route naming an
// upstream, a listener's loops and the top-level engine) ask failedWithin
// about that value themselves.

// docKey is the key of the document's root mapping (fields' path "").
const docKey = ""

// within reports whether key is outer or a value inside it.
func within(key, outer string) bool {
	if outer == docKey || key == outer {
		return true
	}
	return strings.HasPrefix(key, outer) && (key[len(outer)] == '.' || key[len(outer)] == '[')
}

// errorKeys indexes the keys of the errors reported, so that each check
// costs the depth of its key, not the number of errors (a fuzzed file
// has hundreds of thousands of unknown keys).
type errorKeys struct {
	at     map[string]bool // keys with an error
	inside map[string]bool // keys with an error at or inside them
	// read maps the keys of the mappings read so far to whether reading
	// them failed (markRead).
	read map[string]bool
}

// maxKeyDepth bounds the ancestors of a key that are looked at: the
// configuration nests a few levels; deeper elements can only be dots
// inside a map key as written (a header name), which are no nesting.
const maxKeyDepth = 32

// ancestors calls f with key's ancestors, nearest first, then the
// document; key itself first when self is set.
func ancestors(key string, self bool, f func(string)) {
	if self && key != docKey {
		f(key)
	}
	var cuts [maxKeyDepth]int
	n := 0
	for i := 1; i < len(key) && n < maxKeyDepth; i++ {
		if key[i] == '.' || key[i] == '[' {
			cuts[n] = i
			n++
		}
	}
	for n--; n >= 0; n-- {
		f(key[:cuts[n]])
	}
	f(docKey)
}

// record indexes an error at key.
func (k *errorKeys) record(key string) {
	if k.at == nil {
		k.at, k.inside = map[string]bool{}, map[string]bool{}
	}
	k.at[key] = true
	ancestors(key, true, func(a string) { k.inside[a] = true })
}

// failedWithin reports whether an error was reported at key or inside it.
func (d *decoder) failedWithin(key string) bool { return d.keys.inside[key] }

// consequence reports whether an error at key would follow from one
// already reported (the rules above).
func (d *decoder) consequence(key string) bool {
	drop := false
	inner := false // whether key is inside a read mapping other than the document
	ancestors(key, true, func(a string) {
		if d.keys.at[a] {
			drop = true
		}
		if dirty, read := d.keys.read[a]; read && (a != docKey || !inner) {
			drop = drop || dirty
			inner = true
		}
	})
	return drop
}

// markRead records that the mapping at key has been read, and whether
// reading it failed.
func (d *decoder) markRead(key string) {
	if d.keys.read == nil {
		d.keys.read = map[string]bool{}
	}
	d.keys.read[key] = d.failedWithin(key)
}

// unknownKey is the message for a key not in known, naming the closest
// known key when one is near enough to be what was meant.
func unknownKey(k string, known map[string]func(v *yaml.Node, key string)) string {
	best, bestDist := "", maxSuggestDistance+1
	k = normalizeKey(k)
	for name := range known {
		dist := editDistance(k, name)
		if dist < bestDist || dist == bestDist && name < best {
			best, bestDist = name, dist
		}
	}
	if best == "" || bestDist > suggestLimit(best) {
		return "unknown key"
	}
	return fmt.Sprintf("unknown key, did you mean %q?", best)
}

// maxSuggestDistance bounds "did you mean": two edits (a transposition
// counts as one) catch a typo; more suggest an unrelated key.
const maxSuggestDistance = 2

// suggestLimit is the distance at which a known key is still suggested:
// one edit for keys of up to shortKey letters (two edits relate many short
// words: "tls" and "ttl", "host" and "hash"), maxSuggestDistance for
// longer ones.
func suggestLimit(known string) int {
	const shortKey = 5
	if len(known) <= shortKey {
		return 1
	}
	return maxSuggestDistance
}

// maxKeyCompare bounds the work per unknown key: longer keys are compared
// by their first bytes only (no known key is nearly this long).
const maxKeyCompare = 64

// normalizeKey folds what YAML authors from other tools write differently:
// case and dashes ("Path-Prefix" means path_prefix).
func normalizeKey(k string) string {
	if len(k) > maxKeyCompare {
		k = k[:maxKeyCompare]
	}
	return strings.ReplaceAll(strings.ToLower(k), "-", "_")
}

// editDistance is the optimal-string-alignment distance between a and b
// (Levenshtein with adjacent transpositions, each edit costing one), on
// bytes: keys are ASCII.
func editDistance(a, b string) int {
	// Three rows of the dynamic-programming table suffice; for keys
	// they fit on the stack.
	var rows [3][maxKeyCompare + 1]int
	prev2, prev, cur := rows[0][:], rows[1][:], rows[2][:]
	if len(b) > maxKeyCompare {
		prev2, prev, cur = make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	}
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// keyText is an unknown key as its error names it: cut when it is longer
// than any key could be (Error quotes what is not printable).
func keyText(k string) string {
	const maxShown = 64
	if len(k) > maxShown {
		return k[:maxShown] + "..."
	}
	return k
}

// printableKey is key as Error prints it: quoted with escapes when it has
// a byte that is not printable ASCII (map keys come from the file as
// written), so that no key can forge a line of the output.
func printableKey(key string) string {
	for i := 0; i < len(key); i++ {
		if key[i] < ' ' || key[i] > '~' {
			return strconv.QuoteToASCII(key)
		}
	}
	return key
}

// Port ranges: a target or client must name a port; a listener may take
// port 0 (any free port).
const (
	minTargetPort = 1
	minListenPort = 0
	maxPort       = 65535
	// maxPortDigits: longer numbers are not named in the message.
	maxPortDigits = 10
)

// portRangeProblem is the message for a decimal port outside lo-65535,
// and "" for one inside it or for a port that is no decimal number (the
// caller reports the address's form then).
func portRangeProblem(port string, lo int) string {
	if port == "" || strings.Trim(port, "0123456789") != "" {
		return ""
	}
	if len(port) > maxPortDigits {
		return fmt.Sprintf("port is out of range (%d-%d)", lo, maxPort)
	}
	n, _ := strconv.Atoi(port)
	if n >= lo && n <= maxPort {
		return ""
	}
	return fmt.Sprintf("port %d is out of range (%d-%d)", n, lo, maxPort)
}

// syntaxError turns go.yaml.in/yaml/v3's error for b into an *Error at the
// line of the mistake. The library names the wrong line for parser errors
// (libyaml's "did not find expected key" and the like): it prints the
// context mark, where the enclosing block began, instead of the problem
// mark, and prints it 0-based (scanner errors are 1-based). An indentation
// slip on line 6 of a route was reported as line 2. The marks are not
// exported, so the line is found from the parser itself: the mistake is on
// the first line whose addition to the text before it yields the same
// error. Lines past the mistake keep failing with that error (the parser
// stops at it), lines before it parse, so a binary search over prefixes
// finds it in O(log lines) parses. A prefix that fails differently (cut
// inside a quoted string or a flow collection spanning lines) counts as
// parsing, which keeps the search on the side of the real mistake.
func syntaxError(b []byte, err error) *Error {
	msg, libLine := yamlMessage(err)
	ends := lineEnds(b)
	// The first hi lines fail the same way (all of them do); the first lo
	// do not. The library's line is at or before the mistake's: it is the
	// context's or the problem's, 0- or 1-based.
	lo, hi := max(libLine-1, 0), len(ends)
	budget := maxSyntaxSearch
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		prefix := b[:ends[mid-1]]
		if budget -= len(prefix); budget < 0 {
			// A document this large is no configuration written by
			// hand: the library's words, its line included, will do.
			return &Error{Key: yamlKey, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
		}
		var n yaml.Node
		if e := yaml.Unmarshal(prefix, &n); e != nil && e.Error() == err.Error() {
			hi = mid
		} else {
			lo = mid
		}
	}
	return &Error{Line: hi, Key: yamlKey, Msg: msg}
}

// maxSyntaxSearch bounds the bytes syntaxError parses again: a 200 KiB
// configuration is searched whole (18 parses of at most its size).
const maxSyntaxSearch = 4 << 20

// lineEnds are the lengths of b's first 1, 2, ... lines, split where YAML
// breaks a line (Node.Line counts them): CR LF, CR, LF, NEL, LS and PS.
func lineEnds(b []byte) []int {
	var ends []int
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
			i++
		case b[i] == '\r' || b[i] == '\n':
		case b[i] == 0xC2 && i+1 < len(b) && b[i+1] == 0x85: // NEL
			i++
		case b[i] == 0xE2 && i+2 < len(b) && b[i+1] == 0x80 && (b[i+2] == 0xA8 || b[i+2] == 0xA9): // LS, PS
			i += 2
		default:
			continue
		}
		ends = append(ends, i+1)
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(b) {
		ends = append(ends, len(b))
	}
	return ends
}

// yamlKey names a syntax error's place in Error.Key: no key path can be
// known in a document that does not parse.
const yamlKey = "yaml"

// yamlMessage is the library's message without its "yaml: line N: "
// prefix (the line is ours), with a hint for the messages an indentation
// slip produces, and N (0 when there is none).
func yamlMessage(err error) (msg string, line int) {
	msg = strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.Index(rest, ": "); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil && n > 0 {
				msg, line = rest[i+2:], n
			}
		}
	}
	switch msg {
	case "did not find expected key", "did not find expected '-' indicator":
		msg += " (check this line's indentation)"
	}
	return msg, line
}
