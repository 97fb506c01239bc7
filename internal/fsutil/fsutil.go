// Package fsutil holds what the packages that write files durably share
// (the host key, the snapshot store). In: a directory path. Out: an error
// when the directory cannot be synced.
package fsutil

import (
	"errors"
	"os"
	"syscall"
)

// SyncDir makes a rename or create in dir durable. File systems that
// cannot sync a directory (EINVAL) are tolerated: there is nothing more to
// do on them.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return err
	}
	return nil
}
