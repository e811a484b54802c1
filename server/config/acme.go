package config

import (
	"fmt"
	"net/mail"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ACME obtains and renews the certificates of Domains automatically
// (certmagic): `tls.acme` of a listener. Zero fields take the defaults
// below, which WithDefaults prints.
type ACME struct {
	// Email is the account's contact address (optional, but the CA
	// warns it before a certificate expires unrenewed).
	Email string `yaml:"email"`
	// Directory is the ACME server's directory URL (https).
	Directory string `yaml:"directory"`
	// Domains are the names to obtain certificates for: plain DNS names
	// (HTTP-01 and TLS-ALPN-01 cannot prove a wildcard).
	Domains []string `yaml:"domains,flow"`
	// Storage is the directory where accounts, keys and certificates
	// persist across restarts.
	Storage string `yaml:"storage"`
	// Challenges are the challenge types allowed: tls-alpn-01 (answered
	// on this listener) and http-01 (answered on the first
	// redirect_to_https listener, without one it is not used).
	Challenges []string `yaml:"challenges,flow"`
	// CA is a PEM file of the roots that sign the directory's own HTTPS
	// certificate, for a private ACME server; empty: the system's roots.
	CA string `yaml:"ca,omitempty"`
	// httpAddr is the configured address of the listener that answers
	// HTTP-01 (validateTLS), empty when there is none.
	httpAddr string
}

// ACME defaults and challenge names.
const (
	// DefaultACMEDirectory is Let's Encrypt's production directory, the
	// CA most deployments use.
	DefaultACMEDirectory = "https://acme-v02.api.letsencrypt.org/directory"
	// DefaultACMEStorage follows the FHS: state that survives restarts.
	DefaultACMEStorage = "/var/lib/simdedge/acme"
	ChallengeTLSALPN01 = "tls-alpn-01"
	ChallengeHTTP01    = "http-01"
)

// defaultChallenges: both, so that either port being blocked upstream
// still lets a certificate through.
var defaultChallenges = []string{ChallengeTLSALPN01, ChallengeHTTP01}

// HTTPChallengeAddress is the configured address of the listener that
// answers HTTP-01 challenges: the first redirect_to_https listener ("" if
// none).
func (a *ACME) HTTPChallengeAddress() string { return a.httpAddr }

// Allows reports whether challenge type ch is allowed.
func (a *ACME) Allows(ch string) bool {
	return slices.Contains(a.withDefaults().Challenges, ch)
}

func (a *ACME) withDefaults() *ACME {
	if a == nil {
		return nil
	}
	e := *a
	e.Domains = append([]string(nil), a.Domains...)
	if e.Directory == "" {
		e.Directory = DefaultACMEDirectory
	}
	if e.Storage == "" {
		e.Storage = DefaultACMEStorage
	}
	if len(e.Challenges) == 0 {
		e.Challenges = append([]string(nil), defaultChallenges...)
	} else {
		e.Challenges = append([]string(nil), a.Challenges...)
	}
	return &e
}

// Equal reports whether a and b configure the same ACME management (a
// reload cannot change it: certmagic's manager starts once).
func (a *ACME) Equal(b *ACME) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := a.withDefaults(), b.withDefaults()
	return x.Email == y.Email && x.Directory == y.Directory && x.Storage == y.Storage && x.CA == y.CA &&
		slices.Equal(x.Domains, y.Domains) && slices.Equal(x.Challenges, y.Challenges)
}

func (d *decoder) acme(dst **ACME) func(*yaml.Node, string) {
	return func(v *yaml.Node, key string) {
		a := &ACME{}
		*dst = a
		d.fields(v, key, map[string]func(*yaml.Node, string){
			"email":      d.str(&a.Email),
			"directory":  d.str(&a.Directory),
			"domains":    d.strings(&a.Domains),
			"storage":    d.str(&a.Storage),
			"challenges": d.strings(&a.Challenges),
			"ca":         d.str(&a.CA),
		})
		if a.Email != "" && !validEmail(a.Email) {
			d.fail(v, key+".email", "must be an address like ops@example.com")
		}
		if a.Directory != "" && !validDirectory(a.Directory) {
			d.fail(v, key+".directory", "must be an https:// URL")
		}
		if len(a.Domains) == 0 {
			d.fail(v, key+".domains", "at least one name is needed")
		}
		for i, n := range a.Domains {
			if !validDomain(n) {
				d.fail(v, fmt.Sprintf("%s.domains[%d]", key, i), "must be a DNS name (no wildcard, no IP address)")
			}
		}
		for i, c := range a.Challenges {
			if c != ChallengeTLSALPN01 && c != ChallengeHTTP01 {
				d.fail(v, fmt.Sprintf("%s.challenges[%d]", key, i), `must be "tls-alpn-01" or "http-01"`)
			}
		}
	}
}

// validEmail accepts a bare address (local@domain), which is what an ACME
// contact URI carries ("mailto:" + address).
func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == "" && strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".")
}

func validDirectory(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil
}

// maxDNSName and maxDNSLabel are RFC 1035 §2.3.4's limits.
const (
	maxDNSName  = 253
	maxDNSLabel = 63
)

// validDomain accepts a DNS name of at least two labels, each of letters,
// digits and inner hyphens: what HTTP-01 and TLS-ALPN-01 can validate.
func validDomain(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if len(s) == 0 || len(s) > maxDNSName || !strings.Contains(s, ".") {
		return false
	}
	allDigits := true
	for _, label := range strings.Split(s, ".") {
		if len(label) == 0 || len(label) > maxDNSLabel || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
				allDigits = false
			case c >= '0' && c <= '9', c == '-':
			default:
				return false
			}
		}
	}
	return !allDigits // an IPv4 address is not a name
}
