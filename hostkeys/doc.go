// Package hostkeys loads, or creates on first use, the server's SSH host key.
//
// In: a directory (the server's state directory). Out: a [Key] holding a
// [golang.org/x/crypto/ssh.Signer] ready for the SSH server's HostSigners,
// the OpenSSH PEM bytes, the file path, and whether the key was just made.
//
// The key is one Ed25519 key stored at <dir>/ssh_host_ed25519_key in
// OpenSSH format, with its public half in <dir>/ssh_host_ed25519_key.pub
// (authorized_keys format). Both files are written atomically: a temporary
// file in the same directory is written, synced and renamed over the final
// name, and the directory is synced, so a crash never leaves a half-written
// key behind.
//
// Loading is strict: a key file that group or others can access is refused
// with [ErrInsecurePermissions] (as OpenSSH refuses it), and so are
// non-regular files, unparseable files and keys that are not Ed25519. Every
// error names the file. An empty directory argument is an error: the package
// never falls back to the process working directory.
package hostkeys
