package server

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"
)

// authorizedKeys is an authorized_keys file, re-read when it changes so an
// operator can add or revoke keys without a restart.
type authorizedKeys struct {
	path string

	mu      sync.Mutex // protects the following
	keys    []ssh.PublicKey
	modTime time.Time
	size    int64
}

func loadAuthorizedKeys(path string) (*authorizedKeys, error) {
	a := &authorizedKeys{path: path}
	if err := a.reload(); err != nil {
		return nil, err
	}
	if len(a.keys) == 0 {
		return nil, fmt.Errorf("authorized keys file %s holds no keys", path)
	}
	return a, nil
}

func (a *authorizedKeys) reload() error {
	fi, err := os.Stat(a.path)
	if err != nil {
		return fmt.Errorf("authorized keys: %w", err)
	}
	if fi.ModTime().Equal(a.modTime) && fi.Size() == a.size && a.keys != nil {
		return nil
	}
	data, err := os.ReadFile(a.path)
	if err != nil {
		return fmt.Errorf("authorized keys: %w", err)
	}
	var keys []ssh.PublicKey
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		k, _, _, _, err := gossh.ParseAuthorizedKey(line)
		if err != nil {
			return fmt.Errorf("authorized keys %s: line %d: %w", a.path, i+1, err)
		}
		keys = append(keys, k)
	}
	a.keys, a.modTime, a.size = keys, fi.ModTime(), fi.Size()
	return nil
}

// allowed reports whether key is listed. A file that became unreadable
// keeps the last good list.
func (a *authorizedKeys) allowed(key ssh.PublicKey) bool {
	a.mu.Lock()
	_ = a.reload()
	keys := a.keys
	a.mu.Unlock()
	ok := false
	for _, k := range keys {
		if ssh.KeysEqual(k, key) {
			ok = true // no early return: compare against every key
		}
	}
	return ok
}

func (a *authorizedKeys) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.keys)
}
