package hostkeys

import "errors"

// ErrInsecurePermissions is wrapped by the error [LoadOrCreate] returns when
// the host key file is accessible by group or others (mode&0o077 != 0).
// The full message names the file, its mode and the chmod that fixes it.
var ErrInsecurePermissions = errors.New("insecure host key permissions")
