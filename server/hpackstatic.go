package server

// hpackStatic is HPACK's static table (RFC 7541 Appendix A): entry i is
// index i+1. The response encoder (hpackenc.go) refers to its names, and
// to its :status pairs; TestHPACKStaticTable checks every entry against
// x/net's decoder.
var hpackStatic = [61][2]string{
	{":authority", ""},
	{":method", "GET"},
	{":method", "POST"},
	{":path", "/"},
	{":path", "/index.html"},
	{":scheme", "http"},
	{":scheme", "https"},
	{":status", "200"},
	{":status", "204"},
	{":status", "206"},
	{":status", "304"},
	{":status", "400"},
	{":status", "404"},
	{":status", "500"},
	{"accept-charset", ""},
	{"accept-encoding", "gzip, deflate"},
	{"accept-language", ""},
	{"accept-ranges", ""},
	{"accept", ""},
	{"access-control-allow-origin", ""},
	{"age", ""},
	{"allow", ""},
	{"authorization", ""},
	{"cache-control", ""},
	{"content-disposition", ""},
	{"content-encoding", ""},
	{"content-language", ""},
	{"content-length", ""},
	{"content-location", ""},
	{"content-range", ""},
	{"content-type", ""},
	{"cookie", ""},
	{"date", ""},
	{"etag", ""},
	{"expect", ""},
	{"expires", ""},
	{"from", ""},
	{"host", ""},
	{"if-match", ""},
	{"if-modified-since", ""},
	{"if-none-match", ""},
	{"if-range", ""},
	{"if-unmodified-since", ""},
	{"last-modified", ""},
	{"link", ""},
	{"location", ""},
	{"max-forwards", ""},
	{"proxy-authenticate", ""},
	{"proxy-authorization", ""},
	{"range", ""},
	{"referer", ""},
	{"refresh", ""},
	{"retry-after", ""},
	{"server", ""},
	{"set-cookie", ""},
	{"strict-transport-security", ""},
	{"transfer-encoding", ""},
	{"user-agent", ""},
	{"vary", ""},
	{"via", ""},
	{"www-authenticate", ""},
}

// hpackMaxStaticName is the longest name in the static table
// ("access-control-allow-origin").
const hpackMaxStaticName = 27

// hpackNameIndex lists, by name length, the static indexes of the first
// entry of each name: the encoder's name lookup compares only names of
// the right length (at most a handful).
var hpackNameIndex = func() (t [hpackMaxStaticName + 1][]uint8) {
	for i, e := range hpackStatic {
		if i > 0 && hpackStatic[i-1][0] == e[0] {
			continue // the same name as the entry before
		}
		t[len(e[0])] = append(t[len(e[0])], uint8(i+1))
	}
	return t
}()

// hpackStaticName returns the static index of name (lowercase), 0 if the
// table does not hold it.
func hpackStaticName(name string) int {
	if len(name) > hpackMaxStaticName {
		return 0
	}
	for _, i := range hpackNameIndex[len(name)] {
		if hpackStatic[i-1][0] == name {
			return int(i)
		}
	}
	return 0
}

// hpackStatus returns the static index of the pair (:status, code), 0 for
// a code the table does not hold.
func hpackStatus(code string) int {
	for i := 8; i <= 14; i++ {
		if hpackStatic[i-1][1] == code {
			return i
		}
	}
	return 0
}
