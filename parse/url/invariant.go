package url

import "strconv"

// checkInvariants verifies that u's offsets describe its href consistently
// (Ada's url_aggregator::validate). It returns "" when they do, else what
// is wrong. Tests and fuzzers call it on every URL they produce.
func (u *URL) checkInvariants() string {
	n := uint32(len(u.href))
	switch {
	case u.schemeEnd == 0 || u.schemeEnd >= n || u.href[u.schemeEnd] != ':':
		return "scheme end is not a ':'"
	case !(u.schemeEnd < u.userStart && u.userStart <= u.userEnd && u.userEnd <= u.passStart &&
		u.passStart <= u.passEnd && u.passEnd <= u.hostStart && u.hostStart <= u.hostEnd && u.hostEnd <= u.pathStart && u.pathStart <= n):
		return "component offsets out of order"
	case schemeOf(u.href[:u.schemeEnd]) != u.scheme:
		return "scheme type does not match the scheme"
	}
	if u.host == hostNull {
		if u.hostStart != u.schemeEnd+1 || u.userStart != u.hostStart || u.port != omitted {
			return "null host with authority offsets"
		}
		if u.pathStart != u.hostEnd && string(u.href[u.hostEnd:u.pathStart]) != "/." {
			return "unexpected bytes before a null-host path"
		}
	} else {
		if string(u.href[u.schemeEnd+1:u.schemeEnd+3]) != "//" || u.userStart != u.schemeEnd+3 {
			return "host without \"//\""
		}
		if u.passEnd > u.passStart && u.href[u.passStart-1] != ':' {
			return "password not preceded by ':'"
		}
		if (u.passEnd > u.passStart || u.userEnd > u.userStart) != (u.hostStart > u.passEnd) {
			return "credentials and '@' disagree"
		}
		if u.hostStart > u.passEnd && u.href[u.hostStart-1] != '@' {
			return "credentials not followed by '@'"
		}
		if u.port == omitted {
			if u.pathStart != u.hostEnd {
				return "bytes between host and path without a port"
			}
		} else {
			if u.href[u.hostEnd] != ':' || strconv.FormatUint(uint64(u.port), 10) != string(u.href[u.hostEnd+1:u.pathStart]) {
				return "port digits do not match the port"
			}
			if u.port == defaultPorts[u.scheme] {
				return "default port kept"
			}
		}
	}
	if u.queryStart != omitted && (u.queryStart < u.pathStart || u.queryStart >= n || u.href[u.queryStart] != '?') {
		return "query start is not a '?'"
	}
	if u.fragStart != omitted {
		if u.fragStart < u.pathStart || u.fragStart >= n || u.href[u.fragStart] != '#' {
			return "fragment start is not a '#'"
		}
		if u.queryStart != omitted && u.queryStart > u.fragStart {
			return "query after fragment"
		}
	}
	if u.scheme != schemeOther && !u.opaquePath && (u.pathStart == u.pathEnd() || u.href[u.pathStart] != '/') {
		return "special URL path does not start with '/'"
	}
	return ""
}
