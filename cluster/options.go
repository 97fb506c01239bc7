package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"
)

// Defaults for the zero values of [Options].
const (
	DefaultBucket    = "raxol"
	DefaultHeartbeat = 3 * time.Second
	DefaultTTL       = 10 * time.Second
)

// MinSecretLen is the shortest cluster secret accepted, in bytes.
const MinSecretLen = 32

// maxIDLen bounds node and session ids (they become KV keys and NATS
// subject tokens).
const maxIDLen = 256

// maxSecretFile bounds how much of a secret file is read.
const maxSecretFile = 64 << 10

// Options configure a node's membership. Zero Heartbeat, TTL and Bucket
// mean the defaults; a nil Logger means slog.Default().
type Options struct {
	// NATSURL is one NATS URL or several, comma-separated
	// ("nats://a:4222,nats://b:4222"); required.
	NATSURL string
	// CredsFile is a NATS credentials file (nats.UserCredentials); optional.
	CredsFile string
	// CAFile is the root CA that signs the NATS servers' certificates;
	// CertFile and KeyFile are this node's client certificate and key (both
	// or neither). All optional.
	CAFile, CertFile, KeyFile string
	// NodeID names this node, unique in the cluster; required. Letters,
	// digits and - _ = / . (not first or last, never two dots in a row).
	NodeID string
	// HTTPURL is where peers reach this node's HTTP, e.g.
	// http://10.0.0.5:8080; required.
	HTTPURL string
	// SSHAddr is where peers reach this node's SSH, host:port; required.
	SSHAddr string
	// Secret is the cluster secret every node shares (node-to-node trust);
	// at least MinSecretLen bytes. See [ReadSecret].
	Secret []byte
	// Bucket is the prefix of the two KV bucket names (<Bucket>_nodes and
	// <Bucket>_sessions); DefaultBucket if empty. Letters, digits, - and _.
	Bucket string
	// Replicas is how many NATS servers keep a copy of each of the
	// cluster's buckets (nodes, sessions, and the snapshots the server
	// keeps beside them), at most MaxReplicas. 0 means DefaultReplicas
	// when the NATS cluster has that many JetStream servers, else 1. More
	// than the NATS servers can hold makes Join fail with ErrReplicas.
	Replicas int
	// Heartbeat is how often the node entry is written; DefaultHeartbeat
	// if zero.
	Heartbeat time.Duration
	// TTL is how long a silent node stays live: a node that wrote nothing
	// for TTL is gone, with its sessions. DefaultTTL if zero; at least
	// twice Heartbeat and at least one second.
	TTL time.Duration
	// Logger receives the node's logs; slog.Default() if nil.
	Logger *slog.Logger
}

var (
	// keyRe is the KV key charset of nats.go's jetstream package.
	keyRe = regexp.MustCompile(`^[-/_=.a-zA-Z0-9]+$`)
	// bucketRe is the KV bucket charset of nats.go's jetstream package.
	bucketRe = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
)

// checkID returns an error unless id, prefixed as a KV key, is a valid key.
func checkID(what, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("%s is empty", what)
	case len(id) > maxIDLen:
		return fmt.Errorf("%s is %d bytes long (at most %d)", what, len(id), maxIDLen)
	case !keyRe.MatchString(id):
		return fmt.Errorf("%s %q has a character outside letters, digits and - _ = / .", what, id)
	case id[0] == '.' || id[len(id)-1] == '.' || strings.Contains(id, ".."):
		return fmt.Errorf("%s %q starts or ends with a dot, or has two dots in a row", what, id)
	}
	return nil
}

// withDefaults validates o and returns a copy with the defaults filled in.
// Every error names the field.
func (o Options) withDefaults() (Options, error) {
	if strings.TrimSpace(o.NATSURL) == "" {
		return o, errors.New("cluster: Options.NATSURL is required (the --cluster-nats URLs, e.g. nats://127.0.0.1:4222)")
	}
	if o.NodeID == "" {
		return o, errors.New("cluster: Options.NodeID is required (a name unique in the cluster, e.g. the host name)")
	}
	if err := checkID("node id", o.NodeID); err != nil {
		return o, fmt.Errorf("cluster: Options.NodeID: %w", err)
	}
	if o.HTTPURL == "" {
		return o, errors.New("cluster: Options.HTTPURL is required (where peers reach this node's HTTP, e.g. http://10.0.0.5:8080)")
	}
	if u, err := url.Parse(o.HTTPURL); err != nil {
		return o, fmt.Errorf("cluster: Options.HTTPURL %q: %w", o.HTTPURL, err)
	} else if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o, fmt.Errorf("cluster: Options.HTTPURL %q is not an absolute http:// or https:// URL", o.HTTPURL)
	}
	if o.SSHAddr == "" {
		return o, errors.New("cluster: Options.SSHAddr is required (where peers reach this node's SSH, host:port)")
	}
	if host, port, err := net.SplitHostPort(o.SSHAddr); err != nil {
		return o, fmt.Errorf("cluster: Options.SSHAddr %q is not host:port: %w", o.SSHAddr, err)
	} else if host == "" || port == "" {
		return o, fmt.Errorf("cluster: Options.SSHAddr %q needs both a host and a port (peers dial it)", o.SSHAddr)
	}
	if len(o.Secret) < MinSecretLen {
		return o, fmt.Errorf("cluster: Options.Secret is %d bytes; at least %d are required", len(o.Secret), MinSecretLen)
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return o, errors.New("cluster: Options.CertFile and Options.KeyFile go together: give both or neither")
	}
	for _, f := range []struct{ name, path string }{
		{"CredsFile", o.CredsFile}, {"CAFile", o.CAFile}, {"CertFile", o.CertFile}, {"KeyFile", o.KeyFile},
	} {
		if f.path == "" {
			continue
		}
		if _, err := os.Stat(f.path); err != nil {
			return o, fmt.Errorf("cluster: Options.%s: %w", f.name, err)
		}
	}
	if o.Bucket == "" {
		o.Bucket = DefaultBucket
	}
	if !bucketRe.MatchString(o.Bucket) {
		return o, fmt.Errorf("cluster: Options.Bucket %q: only letters, digits, - and _ are allowed", o.Bucket)
	}
	if o.Replicas < 0 || o.Replicas > MaxReplicas {
		return o, fmt.Errorf("cluster: Options.Replicas %d: between 1 and %d (JetStream's most), or 0 for the default", o.Replicas, MaxReplicas)
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.Heartbeat < 0 {
		return o, fmt.Errorf("cluster: Options.Heartbeat %v is negative", o.Heartbeat)
	}
	if o.TTL == 0 {
		o.TTL = DefaultTTL
	}
	if o.TTL < time.Second || o.TTL < 2*o.Heartbeat {
		return o, fmt.Errorf("cluster: Options.TTL %v must be at least 1s and at least twice Options.Heartbeat (%v)", o.TTL, o.Heartbeat)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.Secret = bytes.Clone(o.Secret)
	return o, nil
}

// ReadSecret reads the cluster secret from the file at path. It refuses a
// file that group or others may access (chmod 600 fixes it), a file that
// is not regular, and a secret shorter than MinSecretLen bytes after
// trailing newlines (\n, \r\n) are trimmed. Every error names the path.
func ReadSecret(path string) ([]byte, error) {
	if path == "" {
		return nil, errors.New("cluster: read secret: no path given")
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cluster: read secret: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cluster: read secret %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("cluster: read secret %s: not a regular file (%v)", path, fi.Mode().Type())
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("cluster: read secret %s: group or others may access it (mode %04o); run chmod 600 %s", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, fmt.Errorf("cluster: read secret %s: %w", path, err)
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("cluster: read secret %s: larger than %d bytes; is it the right file?", path, maxSecretFile)
	}
	b = bytes.TrimRight(b, "\r\n")
	if len(b) < MinSecretLen {
		return nil, fmt.Errorf("cluster: read secret %s: %d bytes after trimming the newline; at least %d are required (e.g. head -c 48 /dev/urandom | base64 > %s)", path, len(b), MinSecretLen, path)
	}
	return b, nil
}
