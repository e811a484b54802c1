package url

// schemeType classifies a scheme (URL Standard §4.1 "special scheme").
// Special schemes change parsing (backslashes, hosts, default ports).
type schemeType uint8

const (
	schemeOther schemeType = iota // not special
	schemeHTTP
	schemeHTTPS
	schemeWS
	schemeWSS
	schemeFTP
	schemeFile
)

// defaultPorts is the special schemes' default port (§4.1); file has none.
var defaultPorts = [...]uint32{
	schemeOther: omitted,
	schemeHTTP:  80,
	schemeHTTPS: 443,
	schemeWS:    80,
	schemeWSS:   443,
	schemeFTP:   21,
	schemeFile:  omitted,
}

// schemeOf classifies an already lowercased scheme.
func schemeOf(s []byte) schemeType {
	switch string(s) {
	case "http":
		return schemeHTTP
	case "https":
		return schemeHTTPS
	case "ws":
		return schemeWS
	case "wss":
		return schemeWSS
	case "ftp":
		return schemeFTP
	case "file":
		return schemeFile
	}
	return schemeOther
}

// schemeOfFold classifies a scheme in any case without lowercasing it
// first (the parser lowercases while copying).
func schemeOfFold(s string) schemeType {
	const longestSpecial = len("https")
	if len(s) > longestSpecial {
		return schemeOther
	}
	var lower [longestSpecial]byte
	for i := 0; i < len(s); i++ {
		lower[i] = s[i] | asciiCaseBit
	}
	return schemeOf(lower[:len(s)])
}

// asciiCaseBit is the bit that distinguishes ASCII upper- from lowercase
// letters. Scheme bytes are letters, digits, '+', '-' and '.'; OR-ing the
// bit maps digits and those symbols to themselves or to non-letters, which
// cannot match a special scheme.
const asciiCaseBit = 0x20
