package edgeacme

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrStorage says the storage directory cannot be written or created.
var ErrStorage = errors.New("edgeacme: storage is not a writable directory")

// Check validates what the configuration's syntax cannot: the storage
// directory is writable (or its nearest existing parent is, so it can be
// created) and the CA file, if any, holds certificates. It creates
// nothing but a probe file that it removes.
func Check(o Options) error {
	var errs []error
	if err := checkStorage(o.Storage); err != nil {
		errs = append(errs, err)
	}
	if o.CA != "" {
		if _, err := loadPool(o.CA); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func checkStorage(dir string) error {
	d := filepath.Clean(dir)
	for {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%w: %s (%s is not a directory)", ErrStorage, dir, d)
			}
			f, err := os.CreateTemp(d, ".simdedge-check-*")
			if err != nil {
				return fmt.Errorf("%w: %s: %v", ErrStorage, dir, err)
			}
			f.Close()
			os.Remove(f.Name())
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %s: %v", ErrStorage, dir, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return fmt.Errorf("%w: %s", ErrStorage, dir)
		}
		d = parent
	}
}
