package edgetls

import (
	"crypto/tls"
	"time"
)

// Options configure one TLS listener.
type Options struct {
	// Certificates are chosen by SNI; the first is the default, served to
	// clients that send no name or a name no certificate covers. It may be
	// empty when ManagedNames is not.
	Certificates []CertFiles
	// ManagedNames are answered by the manager (ACME) given to
	// Store.SetManager, before the files; with no file the manager is also
	// the default.
	ManagedNames []string
	// MinVersion is tls.VersionTLS12 or tls.VersionTLS13; zero means
	// DefaultMinVersion. TLS 1.3 is preferred whenever the client has it.
	MinVersion uint16
	// ALPN lists the protocols offered in order of preference; nil means
	// DefaultALPN.
	ALPN []string
	// ClientCA is a PEM file of the CAs that sign client certificates;
	// empty turns client authentication off.
	ClientCA string
	// ClientAuth says what a client certificate is for: ClientAuthRequire
	// or ClientAuthVerifyIfGiven (the default when ClientCA is set).
	ClientAuth ClientAuthMode
	// HandshakeTimeout bounds a handshake from the first byte read; zero
	// means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// TicketRotation is how often a new session ticket key starts
	// encrypting tickets; zero means DefaultTicketRotation.
	TicketRotation time.Duration
}

// CertFiles names a certificate chain and its private key, both PEM.
type CertFiles struct {
	Cert string
	Key  string
}

// ClientAuthMode is how a listener treats client certificates.
type ClientAuthMode string

// Client authentication modes (config `client_auth.mode`).
const (
	// ClientAuthRequire refuses, at the handshake, a client without a
	// certificate signed by ClientCA.
	ClientAuthRequire ClientAuthMode = "require"
	// ClientAuthVerifyIfGiven accepts clients without a certificate and
	// refuses, at the handshake, one whose certificate fails verification.
	ClientAuthVerifyIfGiven ClientAuthMode = "verify_if_given"
)

// Defaults.
const (
	// DefaultMinVersion: TLS 1.2 is still needed by some clients (older
	// Android, Java 8, embedded stacks); 1.0 and 1.1 are deprecated by
	// RFC 8996.
	DefaultMinVersion = tls.VersionTLS12
	// DefaultHandshakeTimeout bounds how long a connection may hold a
	// goroutine and its buffers before it has proved it speaks TLS; a
	// real client completes in a few round trips, so 10 s leaves room for
	// slow mobile links without letting idle sockets pile up.
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultTicketRotation: a key that leaks exposes at most the
	// sessions of its hour, and resumption keeps working across
	// rotations thanks to TicketKeysKept.
	DefaultTicketRotation = time.Hour
	// TicketKeysKept is how many ticket keys decrypt at once (the newest
	// encrypts): with hourly rotation a ticket resumes for up to a day.
	TicketKeysKept = 24
	// ExpiryWarning: `simdedge check` warns when a certificate expires
	// within this span, time enough to renew it.
	ExpiryWarning = 14 * 24 * time.Hour
)

// DefaultALPN offers HTTP/2 first, then HTTP/1.1: the server speaks h2
// on the connections that negotiate it (server/h2serve.go).
var DefaultALPN = []string{"h2", "http/1.1"}

// cipherSuites are the TLS 1.2 suites offered: ECDHE key exchange (forward
// secrecy) with an AEAD cipher only, no CBC, no RSA key exchange. TLS 1.3
// suites are all AEAD and not configurable in crypto/tls.
var cipherSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// CipherSuites returns the TLS 1.2 suites offered (a copy).
func CipherSuites() []uint16 { return append([]uint16(nil), cipherSuites...) }

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.MinVersion == 0 {
		o.MinVersion = DefaultMinVersion
	}
	if o.ALPN == nil {
		o.ALPN = append([]string(nil), DefaultALPN...)
	}
	if o.ClientCA != "" && o.ClientAuth == "" {
		o.ClientAuth = ClientAuthVerifyIfGiven
	}
	if o.HandshakeTimeout == 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.TicketRotation == 0 {
		o.TicketRotation = DefaultTicketRotation
	}
	return o
}

// ParseVersion reads "1.2" or "1.3".
func ParseVersion(s string) (uint16, bool) {
	switch s {
	case "1.2":
		return tls.VersionTLS12, true
	case "1.3":
		return tls.VersionTLS13, true
	}
	return 0, false
}

// VersionName is ParseVersion's inverse ("" for other versions).
func VersionName(v uint16) string {
	switch v {
	case tls.VersionTLS12:
		return "1.2"
	case tls.VersionTLS13:
		return "1.3"
	}
	return ""
}
