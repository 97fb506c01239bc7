package hostkeys

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/internal/fsutil"
)

// FileName is the name of the private host key file inside the directory
// given to [LoadOrCreate]. The public key is FileName + ".pub".
const FileName = "ssh_host_ed25519_key"

// maxKeySize bounds how much of a key file is read. An OpenSSH Ed25519 key
// is about 400 bytes; anything near this limit is not a host key.
const maxKeySize = 64 << 10

// Key is a loaded or freshly created host key.
type Key struct {
	// Signer signs the SSH handshake; put it in the server's HostSigners.
	Signer gossh.Signer
	// PEM is the private key in OpenSSH PEM format, exactly as stored in Path.
	PEM []byte
	// Path is the private key file, filepath.Join(dir, FileName).
	Path string
	// Created reports whether this call generated the key (first use)
	// rather than loading an existing one.
	Created bool
}

// Fingerprint returns the SHA-256 fingerprint of the public key in the form
// OpenSSH prints it, "SHA256:<base64>". It returns "" for a nil Key or a Key
// without a Signer.
func (k *Key) Fingerprint() string {
	if k == nil || k.Signer == nil {
		return ""
	}
	return gossh.FingerprintSHA256(k.Signer.PublicKey())
}

// LoadOrCreate returns the Ed25519 host key stored at
// filepath.Join(dir, FileName), generating it on first use.
//
// dir is created with mode 0700 if missing; dir == "" is an error (the key
// is never placed in the working directory by default). A generated key is
// written with mode 0600 and its public half with mode 0644, each
// atomically. An existing key is refused if its mode lets group or others
// access it (the error wraps [ErrInsecurePermissions]), if it is not a
// regular file, if it does not parse, or if it is not an Ed25519 key.
//
// LoadOrCreate does not lock the directory: two processes creating the key
// in the same directory at the same moment each end up with a valid key, and
// the file holds the one renamed last.
func LoadOrCreate(dir string) (*Key, error) {
	if dir == "" {
		return nil, errors.New("load host key: empty directory (refusing to use the working directory)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create host key directory %s: %w", dir, err)
	}
	path := filepath.Join(dir, FileName)
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return load(path)
	case errors.Is(err, fs.ErrNotExist):
		return create(path)
	default:
		return nil, fmt.Errorf("stat host key %s: %w", path, err)
	}
}

// load reads and validates the existing key file at path.
func load(path string) (*Key, error) {
	// Stat (following symlinks) before opening so that a FIFO or device is
	// refused without blocking in open; fstat again after opening so the
	// checks apply to the file actually read.
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("stat host key %s: %w", path, err)
	}
	if err := checkMode(path, fi); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open host key %s: %w", path, err)
	}
	defer f.Close()
	fi, err = f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat host key %s: %w", path, err)
	}
	if err := checkMode(path, fi); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeySize+1))
	if err != nil {
		return nil, fmt.Errorf("read host key %s: %w", path, err)
	}
	if len(data) > maxKeySize {
		return nil, fmt.Errorf("read host key %s: file larger than %d bytes", path, maxKeySize)
	}
	signer, err := gossh.ParsePrivateKey(data)
	if err != nil {
		return nil, fmt.Errorf("parse host key %s: %w", path, err)
	}
	if t := signer.PublicKey().Type(); t != gossh.KeyAlgoED25519 {
		return nil, fmt.Errorf("host key %s is of type %s, want %s", path, t, gossh.KeyAlgoED25519)
	}
	return &Key{Signer: signer, PEM: data, Path: path}, nil
}

// checkMode refuses non-regular files and files that group or others may
// access.
func checkMode(path string, fi fs.FileInfo) error {
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("host key %s is not a regular file (mode %s)", path, fi.Mode())
	}
	perm := fi.Mode().Perm()
	if perm&0o077 == 0 {
		return nil
	}
	how := "accessible"
	switch {
	case perm&0o044 != 0:
		how = "readable"
	case perm&0o022 != 0:
		how = "writable"
	}
	return fmt.Errorf("%w: host key %s is %s by group or others (mode %04o); run chmod 600 %s",
		ErrInsecurePermissions, path, how, perm, path)
}

// create generates a new Ed25519 key and writes it, public half first, so
// that a crash in between leaves no private key and the next start simply
// generates again.
func create(path string) (*Key, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate host key %s: %w", path, err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		return nil, fmt.Errorf("marshal host key %s: %w", path, err)
	}
	pemBytes := pem.EncodeToMemory(block)
	signer, err := gossh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("create signer for host key %s: %w", path, err)
	}
	sshPub, err := gossh.NewPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("create public key for host key %s: %w", path, err)
	}
	if err := writeAtomic(path+".pub", gossh.MarshalAuthorizedKey(sshPub), 0o644); err != nil {
		return nil, fmt.Errorf("write host public key: %w", err)
	}
	if err := writeAtomic(path, pemBytes, 0o600); err != nil {
		return nil, fmt.Errorf("write host key: %w", err)
	}
	return &Key{Signer: signer, PEM: pemBytes, Path: path, Created: true}, nil
}

// writeAtomic writes data to path via a temporary file in the same
// directory: create (mode 0600), chmod to perm, write, fsync, close, rename
// over path, fsync the directory.
func writeAtomic(path string, data []byte, perm fs.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file for %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp already uses 0600; Chmod sets perm exactly, ignoring umask.
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("chmod %s: %w", tmp, err)
	}
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmp, path, err)
	}
	if err := fsutil.SyncDir(dir); err != nil {
		return fmt.Errorf("sync directory of %s: %w", path, err)
	}
	return nil
}
