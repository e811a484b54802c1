package metrics

// Method indexes: the methods of RFC 9110 §9 and PATCH (RFC 5789) get
// their own label value; everything else counts as "other", so that a
// client cannot grow the label set.
const (
	MethodGet = iota
	MethodHead
	MethodPost
	MethodPut
	MethodDelete
	MethodOptions
	MethodPatch
	MethodConnect
	MethodTrace
	MethodOther
	Methods // number of method indexes
)

// MethodNames are the label values of the method indexes.
var MethodNames = [Methods]string{"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE", "other"}

// MethodIndex maps a request method (case-sensitive, RFC 9110 §9.1) to its
// index. It does not allocate: the conversions in the switch are compared
// in place by the compiler.
func MethodIndex(m []byte) int {
	switch string(m) {
	case "GET":
		return MethodGet
	case "HEAD":
		return MethodHead
	case "POST":
		return MethodPost
	case "PUT":
		return MethodPut
	case "DELETE":
		return MethodDelete
	case "OPTIONS":
		return MethodOptions
	case "PATCH":
		return MethodPatch
	case "CONNECT":
		return MethodConnect
	case "TRACE":
		return MethodTrace
	}
	return MethodOther
}

// Classes is the number of status classes: index 1..5 for 1xx..5xx, and 0
// for a status outside 100..599 (which the server never sends, but a
// counter must not index out of range).
const Classes = 6

// ClassNames are the label values of the status classes.
var ClassNames = [Classes]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// ClassIndex maps a status code to its class index.
func ClassIndex(status int) int {
	c := status / 100
	if c < 1 || c > 5 {
		return 0
	}
	return c
}

// ParseStatuses are the statuses the server answers a request it could
// not parse or admit with (the parser's errors, phttp.StatusFor, and the
// body limit); ParseStatusIndex maps any other to the last slot, "other".
var ParseStatuses = [...]int{400, 408, 413, 414, 431, 501, 505}

// ParseKinds is the number of parse-error slots: the statuses above and
// "other".
const ParseKinds = len(ParseStatuses) + 1

// ParseStatusIndex maps an error status to its slot.
func ParseStatusIndex(status int) int {
	for i, s := range ParseStatuses {
		if s == status {
			return i
		}
	}
	return len(ParseStatuses)
}
