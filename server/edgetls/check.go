package edgetls

import (
	"errors"
	"fmt"
	"time"
)

// Errors of Check.
var (
	ErrExpired     = errors.New("edgetls: certificate expired")
	ErrNotYetValid = errors.New("edgetls: certificate not yet valid")
)

// Check validates o's files as `simdedge check` does: every certificate
// loads and matches its key, none has expired or is not yet valid at now,
// and the client CA file holds certificates. It returns warnings for
// certificates that expire within ExpiryWarning, and every error joined.
func Check(o Options, now time.Time) (warnings []string, err error) {
	if _, err := load(o, &Store{}); err != nil {
		return nil, err
	}
	var errs []error
	for i, f := range o.Certificates {
		c, err := loadPair(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		leaf := c.Leaf
		switch {
		case now.After(leaf.NotAfter):
			errs = append(errs, fmt.Errorf("%w: certificates[%d] (%s) on %s", ErrExpired, i, f.Cert, leaf.NotAfter.UTC().Format(time.RFC3339)))
		case now.Before(leaf.NotBefore):
			errs = append(errs, fmt.Errorf("%w: certificates[%d] (%s) until %s", ErrNotYetValid, i, f.Cert, leaf.NotBefore.UTC().Format(time.RFC3339)))
		case leaf.NotAfter.Sub(now) < ExpiryWarning:
			warnings = append(warnings, fmt.Sprintf("certificates[%d] (%s) expires on %s, in less than %d days",
				i, f.Cert, leaf.NotAfter.UTC().Format(time.RFC3339), int(ExpiryWarning/(24*time.Hour))))
		}
	}
	return warnings, errors.Join(errs...)
}
