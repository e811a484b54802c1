package edgetls

import (
	"crypto/tls"
	"errors"
	"testing"
)

func TestClientConfigDefaults(t *testing.T) {
	c, err := ClientConfig(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.MinVersion != tls.VersionTLS12 || c.RootCAs != nil || c.InsecureSkipVerify || len(c.Certificates) != 0 || c.ClientSessionCache != nil {
		t.Fatalf("defaults: %+v", c)
	}
	if _, err := ClientConfig(ClientOptions{Cert: CertFiles{Cert: "c.pem"}}); !errors.Is(err, ErrClientPair) {
		t.Fatalf("half a pair: %v", err)
	}
}
