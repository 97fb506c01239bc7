package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestJoinRejectsInvalidOptionsNamingTheField(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	valid := func() Options {
		return Options{NATSURL: "nats://127.0.0.1:1", NodeID: "n1", HTTPURL: "http://10.0.0.5:8080",
			SSHAddr: "10.0.0.5:2222", Secret: testSecret}
	}
	cases := []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"no NATS URL", func(o *Options) { o.NATSURL = " " }, "Options.NATSURL"},
		{"no node id", func(o *Options) { o.NodeID = "" }, "Options.NodeID"},
		{"node id with a space", func(o *Options) { o.NodeID = "a b" }, "Options.NodeID"},
		{"node id with a colon", func(o *Options) { o.NodeID = "a:b" }, "Options.NodeID"},
		{"node id with two dots", func(o *Options) { o.NodeID = "a..b" }, "Options.NodeID"},
		{"node id ending with a dot", func(o *Options) { o.NodeID = "a." }, "Options.NodeID"},
		{"node id too long", func(o *Options) { o.NodeID = strings.Repeat("a", 300) }, "Options.NodeID"},
		{"no HTTP URL", func(o *Options) { o.HTTPURL = "" }, "Options.HTTPURL"},
		{"relative HTTP URL", func(o *Options) { o.HTTPURL = "/x" }, "Options.HTTPURL"},
		{"HTTP URL of another scheme", func(o *Options) { o.HTTPURL = "ftp://h/" }, "Options.HTTPURL"},
		{"no SSH address", func(o *Options) { o.SSHAddr = "" }, "Options.SSHAddr"},
		{"SSH address without a port", func(o *Options) { o.SSHAddr = "10.0.0.5" }, "Options.SSHAddr"},
		{"SSH address without a host", func(o *Options) { o.SSHAddr = ":2222" }, "Options.SSHAddr"},
		{"no secret", func(o *Options) { o.Secret = nil }, "Options.Secret"},
		{"short secret", func(o *Options) { o.Secret = make([]byte, 31) }, "Options.Secret"},
		{"bad bucket", func(o *Options) { o.Bucket = "a.b" }, "Options.Bucket"},
		{"negative heartbeat", func(o *Options) { o.Heartbeat = -time.Second }, "Options.Heartbeat"},
		{"TTL under twice the heartbeat", func(o *Options) { o.Heartbeat = 3 * time.Second; o.TTL = 5 * time.Second }, "Options.TTL"},
		{"TTL under a second", func(o *Options) { o.Heartbeat = 100 * time.Millisecond; o.TTL = 500 * time.Millisecond }, "Options.TTL"},
		{"cert without key", func(o *Options) { o.CertFile = "c.pem" }, "Options.KeyFile"},
		{"missing creds file", func(o *Options) { o.CredsFile = missing }, "Options.CredsFile"},
		{"missing CA file", func(o *Options) { o.CAFile = missing }, "Options.CAFile"},
		{"missing cert file", func(o *Options) { o.CertFile, o.KeyFile = missing, missing }, "Options.CertFile"},
	}
	for _, c := range cases {
		o := valid()
		c.change(&o)
		n, err := Join(context.Background(), o)
		if err == nil {
			n.Close()
			t.Errorf("%s: Join succeeded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to name %s", c.name, err, c.want)
		}
	}
	o, err := valid().withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if o.Bucket != DefaultBucket || o.Heartbeat != DefaultHeartbeat || o.TTL != DefaultTTL || o.Logger == nil {
		t.Errorf("defaults: %+v", o)
	}
}

func TestReadSecret(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	secret := strings.Repeat("k", 40)

	p := write("good", secret+"\n", 0o600)
	got, err := ReadSecret(p)
	if err != nil || string(got) != secret {
		t.Fatalf("ReadSecret(0600 file) = %q, %v; want the secret without its newline", got, err)
	}
	got, err = ReadSecret(write("crlf", secret+"\r\n", 0o400))
	if err != nil || string(got) != secret {
		t.Fatalf("ReadSecret(CRLF) = %q, %v", got, err)
	}

	for _, c := range []struct {
		name, path, want string
	}{
		{"world-readable", write("open", secret, 0o644), "chmod 600"},
		{"group-readable", write("group", secret, 0o640), "mode 0640"},
		{"short", write("short", strings.Repeat("k", 31)+"\n", 0o600), "31 bytes"},
		{"missing", filepath.Join(dir, "nope"), "no such file"},
		{"a directory", dir, "not a regular file"},
	} {
		_, err := ReadSecret(c.path)
		if err == nil {
			t.Errorf("%s: ReadSecret succeeded", c.name)
			continue
		}
		if !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want it to name %s and say %q", c.name, err, c.path, c.want)
		}
	}
}
