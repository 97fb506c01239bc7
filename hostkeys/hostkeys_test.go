package hostkeys

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gossh "golang.org/x/crypto/ssh"
)

func TestLoadOrCreateGeneratesKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "keys") // does not exist yet
	k, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatalf("LoadOrCreate: %v", err)
	}
	if !k.Created {
		t.Error("Created = false on first use, want true")
	}
	wantPath := filepath.Join(dir, FileName)
	if k.Path != wantPath {
		t.Errorf("Path = %q, want %q", k.Path, wantPath)
	}
	if got := k.Signer.PublicKey().Type(); got != gossh.KeyAlgoED25519 {
		t.Errorf("key type = %q, want %q", got, gossh.KeyAlgoED25519)
	}
	if fp := k.Fingerprint(); !strings.HasPrefix(fp, "SHA256:") {
		t.Errorf("Fingerprint() = %q, want SHA256:... form", fp)
	}

	assertMode(t, dir, 0o700, true)
	assertMode(t, wantPath, 0o600, false)
	assertMode(t, wantPath+".pub", 0o644, false)

	onDisk, err := os.ReadFile(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, k.PEM) {
		t.Error("Key.PEM differs from the file on disk")
	}
	if b, _ := pem.Decode(k.PEM); b == nil || b.Type != "OPENSSH PRIVATE KEY" {
		t.Errorf("PEM is not an OpenSSH private key block: %q", k.PEM)
	}

	pubBytes, err := os.ReadFile(wantPath + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _, _, err := gossh.ParseAuthorizedKey(pubBytes)
	if err != nil {
		t.Fatalf("parse .pub: %v", err)
	}
	if got := gossh.FingerprintSHA256(pub); got != k.Fingerprint() {
		t.Errorf(".pub fingerprint %s, want %s", got, k.Fingerprint())
	}

	// No temporary files are left behind.
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{FileName, FileName + ".pub"}; strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("dir holds %v, want %v", names, want)
	}
}

func TestLoadOrCreateReloadsSameKey(t *testing.T) {
	dir := t.TempDir()
	first, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	second, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatalf("second LoadOrCreate: %v", err)
	}
	if second.Created {
		t.Error("Created = true on second call, want false")
	}
	if first.Fingerprint() != second.Fingerprint() {
		t.Errorf("fingerprint changed: %s then %s", first.Fingerprint(), second.Fingerprint())
	}
	if !bytes.Equal(first.PEM, second.PEM) {
		t.Error("PEM changed between calls")
	}
	// The loaded signer must produce signatures the generated key verifies.
	data := []byte("handshake")
	sig, err := second.Signer.Sign(rand.Reader, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Signer.PublicKey().Verify(data, sig); err != nil {
		t.Errorf("loaded key's signature does not verify with generated key: %v", err)
	}
}

func TestLoadOrCreateRefusesInsecurePermissions(t *testing.T) {
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o601} {
		t.Run(mode.String(), func(t *testing.T) {
			dir := t.TempDir()
			k, err := LoadOrCreate(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(k.Path, mode); err != nil {
				t.Fatal(err)
			}
			_, err = LoadOrCreate(dir)
			if !errors.Is(err, ErrInsecurePermissions) {
				t.Fatalf("err = %v, want ErrInsecurePermissions", err)
			}
			msg := err.Error()
			for _, want := range []string{k.Path, fmt.Sprintf("(mode %04o)", mode.Perm()), "chmod 600 " + k.Path} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not mention %q", msg, want)
				}
			}
			// The key must not have been replaced.
			if err := os.Chmod(k.Path, 0o600); err != nil {
				t.Fatal(err)
			}
			again, err := LoadOrCreate(dir)
			if err != nil {
				t.Fatal(err)
			}
			if again.Fingerprint() != k.Fingerprint() {
				t.Error("refused key was replaced")
			}
		})
	}
}

func TestLoadOrCreateInsecureMessage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	k, err := LoadOrCreate(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(k.Path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = LoadOrCreate(dir)
	want := "host key " + path + " is readable by group or others (mode 0644); run chmod 600 " + path
	if err == nil || !strings.HasSuffix(err.Error(), want) {
		t.Errorf("err = %v, want it to end in %q", err, want)
	}
}

func TestLoadOrCreateCorruptedKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\ngarbage\n-----END OPENSSH PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadOrCreate(dir)
	if err == nil {
		t.Fatal("corrupted key accepted")
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name %s", err, path)
	}
	if errors.Is(err, ErrInsecurePermissions) {
		t.Errorf("corrupted key reported as insecure permissions: %v", err)
	}
	// The corrupted file must be left for the operator, not overwritten.
	if data, _ := os.ReadFile(path); !bytes.Contains(data, []byte("garbage")) {
		t.Error("corrupted key file was overwritten")
	}
}

func TestLoadOrCreateRejectsNonEd25519(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	block, err := gossh.MarshalPrivateKey(priv, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = LoadOrCreate(dir)
	if err == nil {
		t.Fatal("ECDSA key accepted")
	}
	for _, want := range []string{path, gossh.KeyAlgoECDSA256} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestLoadOrCreateRejectsNonRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := LoadOrCreate(dir)
	if err == nil {
		t.Fatal("directory accepted as host key")
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("err = %v, want it to name %s as not a regular file", err, path)
	}
}

func TestLoadOrCreateEmptyDir(t *testing.T) {
	if _, err := LoadOrCreate(""); err == nil {
		t.Fatal(`LoadOrCreate("") succeeded, want an error`)
	}
}

// TestNeverWritesWorkingDirectory guards against the wish default that
// writes ./id_ed25519 into the working directory when no key is configured.
// It uses t.Chdir, so it cannot run in parallel.
func TestNeverWritesWorkingDirectory(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	if _, err := LoadOrCreate(""); err == nil {
		t.Error(`LoadOrCreate("") succeeded, want an error`)
	}
	other := t.TempDir()
	if _, err := LoadOrCreate(other); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreate(other); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(cwd)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("working directory gained files: %v", names)
	}
}

func TestFingerprintNilKey(t *testing.T) {
	var k *Key
	if got := k.Fingerprint(); got != "" {
		t.Errorf("nil Key Fingerprint() = %q, want empty", got)
	}
}

func assertMode(t *testing.T, path string, want os.FileMode, isDir bool) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.IsDir() != isDir {
		t.Errorf("%s: IsDir = %v, want %v", path, fi.IsDir(), isDir)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %04o, want %04o", path, got, want)
	}
}
