package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildOut  []byte
)

// buildBinary builds raxol-ssh once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "raxol-ssh-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "raxol-ssh")
		goBin, err := exec.LookPath("go")
		if err != nil {
			buildErr = err
			return
		}
		buildOut, buildErr = exec.Command(goBin, "build", "-o", binPath, ".").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// spawn starts `raxol-ssh mcp --stdio args...` as an MCP client would,
// with a go-sdk client over mcp.CommandTransport.
func spawn(t *testing.T, args ...string) (*mcp.ClientSession, *exec.Cmd, *testkit.SyncBuffer) {
	t.Helper()
	bin := buildBinary(t)
	cmd := exec.Command(bin, append([]string{"mcp", "--stdio", "--data-dir", t.TempDir()}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+t.TempDir())
	stderr := &testkit.SyncBuffer{}
	cmd.Stderr = stderr
	c := mcp.NewClient(&mcp.Implementation{Name: "stdio-test-agent", Version: "1.0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("spawn: %v\nstderr: %s", err, stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, cmd, stderr
}

func callJSON(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out, res.IsError
}

// TestMCPStdioDrivesTheDemo: an agent spawns `raxol-ssh mcp --stdio`,
// lists tools, types into the search box, reads it back and reads
// resources; the demo's own policy still binds (raxol_send_key asks, and
// with no terminal attached an ask is denied); stdout carries nothing but
// the protocol, and the process exits cleanly when the client leaves.
func TestMCPStdioDrivesTheDemo(t *testing.T) {
	cs, cmd, stderr := spawn(t)
	ctx := context.Background()

	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"raxol_screenshot", "discover_tools"} {
		if !contains(names, want) {
			t.Fatalf("tools/list = %v, lacks %s", names, want)
		}
	}
	if contains(names, "raxol_send_key") {
		t.Fatalf("raxol_send_key (ask, no human attached) is listed: %v", names)
	}

	if out, isErr := callJSON(t, cs, "demo.search.type_into", map[string]any{"text": "over-stdio"}); isErr {
		t.Fatalf("type_into: %v", out)
	}
	out, isErr := callJSON(t, cs, "demo.search.get_value", nil)
	if isErr || out["result"].(map[string]any)["value"] != "over-stdio" {
		t.Fatalf("get_value = %v", out)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://state/services"})
	if err != nil || len(res.Contents) == 0 || !strings.Contains(res.Contents[0].Text, "[") {
		t.Fatalf("demo://state/services: %v %v", res, err)
	}
	res, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "raxol://session/context"})
	if err != nil || !strings.Contains(res.Contents[0].Text, "stdio-test-agent") {
		t.Fatalf("raxol://session/context does not show the agent: %v %v", res, err)
	}

	out, isErr = callJSON(t, cs, "raxol_send_key", map[string]any{"keys": []string{"a"}})
	if !isErr || out["error"] != "authorization_required" || out["decision"] != "ask" {
		t.Fatalf("raxol_send_key over stdio = %v", out)
	}

	if !regexp.MustCompile(`raxol-ssh mcp: serving session \S+ on stdio`).MatchString(stderr.String()) {
		t.Errorf("stderr lacks the session line: %s", stderr.String())
	}
	if strings.Contains(stderr.String(), "join code") {
		t.Errorf("a join code without SSH: %s", stderr.String())
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("close: %v\nstderr: %s", err, stderr.String())
	}
	if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
		t.Fatalf("process state %v\nstderr: %s", cmd.ProcessState, stderr.String())
	}
}

// TestMCPStdioWithSSH: with --ssh-addr the same process serves SSH; the
// join command and one-time code for that very session are on stderr,
// and a human who joins with them sees the agent's changes.
func TestMCPStdioWithSSH(t *testing.T) {
	cs, _, stderr := spawn(t, "--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	if out, isErr := callJSON(t, cs, "demo.search.type_into", map[string]any{"text": "seen-by-human"}); isErr {
		t.Fatalf("type_into: %v", out)
	}
	log := stderr.String()
	sess := regexp.MustCompile(`raxol-ssh mcp: serving session (\S+) on stdio`).FindStringSubmatch(log)
	join := regexp.MustCompile(`raxol-ssh mcp: a human joins with: ssh -p (\d+) 127\.0\.0\.1 -t join (\S+)\n`).FindStringSubmatch(log)
	code := regexp.MustCompile(`raxol-ssh mcp: join code \(once\): ([23456789ABCDEFGHJKMNPQRSTUVWXYZ]{10})\n`).FindStringSubmatch(log)
	if sess == nil || join == nil || code == nil {
		t.Fatalf("stderr lacks the session, join command or code:\n%s", log)
	}
	if join[2] != sess[1] {
		t.Fatalf("join command names %s, the session is %s", join[2], sess[1])
	}

	// The human joins that very session with the code and sees the
	// agent's change, then the next one live.
	human := testkit.Run(t, net.JoinHostPort("127.0.0.1", join[1]), "join "+join[2]+" "+code[1])
	human.WaitFor("seen-by-human")
	if out, isErr := callJSON(t, cs, "demo.search.type_into", map[string]any{"text": "live-change"}); isErr {
		t.Fatalf("type_into: %v", out)
	}
	human.WaitFor("live-change")
	// The code was used up: once the human has left, another one with
	// the same code is refused.
	human.Close()
	other := testkit.Run(t, net.JoinHostPort("127.0.0.1", join[1]), "join "+join[2]+" "+code[1])
	other.WaitExit()
	if s := other.Stderr(); !strings.Contains(s, "no such session") {
		t.Errorf("second join with a used code: stderr %q", s)
	}
}

// TestMCPSubcommandInProcess runs the subcommand's run function with
// pipes for stdin and stdout.
func TestMCPSubcommandInProcess(t *testing.T) {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	var stderr testkit.SyncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runMCP(context.Background(), []string{"--stdio", "--data-dir", t.TempDir()}, env(nil), &stderr,
			&mcp.IOTransport{Reader: c2sR, Writer: s2cW})
	}()
	c := mcp.NewClient(&mcp.Implementation{Name: "in-process", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: s2cR, Writer: c2sW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, isErr := callJSON(t, cs, "demo.search.type_into", map[string]any{"text": "x"}); isErr {
		t.Fatalf("type_into: %v", out)
	}
	_ = cs.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("runMCP did not return after the client left")
	}
	if !strings.Contains(stderr.String(), "raxol-ssh serving MCP over stdio") || !strings.Contains(stderr.String(), "mcp_policy=") {
		t.Errorf("no posture line on stderr: %s", stderr.String())
	}
}

func TestMCPSubcommandBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "pass --stdio"},
		{[]string{"--stdio", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--stdio", "--mcp-allowed-tools", "a**b"}, 1, "--mcp-allowed-tools"},
	} {
		var out bytes.Buffer
		code := runMCP(context.Background(), append(tc.args, "--data-dir", t.TempDir()), env(nil), &out, &mcp.IOTransport{})
		if code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%v: exit %d (want %d), output %q, want mention of %q", tc.args, code, tc.code, out.String(), tc.want)
		}
	}
	// Through run, as main calls it.
	var out bytes.Buffer
	if code := run(context.Background(), []string{"mcp"}, env(nil), &out); code != 2 || !strings.Contains(out.String(), "--stdio") {
		t.Errorf("run mcp: exit %d, %q", code, out.String())
	}
}

func TestAPIKeysFlags(t *testing.T) {
	o, _, err := parse([]string{"--data-dir", "/d"}, env(map[string]string{"RAXOL_API_KEYS_FILE": "/keys"}), &bytes.Buffer{})
	if err != nil || o.Headless.APIKeysFile != "/keys" || o.Headless.IdleTimeout != 30*time.Minute {
		t.Fatalf("%+v %v", o, err)
	}
	o, _, err = parse([]string{"--data-dir", "/d", "--api-keys", "/flag", "--headless-idle-timeout", "5m"}, env(map[string]string{"RAXOL_API_KEYS_FILE": "/keys"}), &bytes.Buffer{})
	if err != nil || o.Headless.APIKeysFile != "/flag" || o.Headless.IdleTimeout != 5*time.Minute {
		t.Fatalf("%+v %v", o, err)
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestAgentsDocHeadlessPolicy: the policy file docs/AGENTS.md shows lets
// the demo serve /mcp with --api-keys: raxol_start, drive the session,
// raxol_stop.
func TestAgentsDocHeadlessPolicy(t *testing.T) {
	doc, err := os.ReadFile("../../docs/AGENTS.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "```json\n{\n  \"tools\"")
	if start < 0 {
		t.Fatal("docs/AGENTS.md has no policy example")
	}
	body := text[start+len("```json\n"):]
	body = body[:strings.Index(body, "```")]
	dir := t.TempDir()
	policy, keys := filepath.Join(dir, "policy.json"), filepath.Join(dir, "api_keys")
	const key = "0123456789abcdef0123456789abcdef"
	if err := os.WriteFile(policy, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keys, []byte("# test\n"+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	httpAddr, out := bootCommand(t, []string{"--mcp-policy", policy, "--data-dir", filepath.Join(dir, "data"),
		"--ssh-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, env(map[string]string{"RAXOL_API_KEYS_FILE": keys}))
	if !strings.Contains(out.String(), "headless_mcp=\"/mcp with 1 API keys") {
		t.Errorf("posture line does not show /mcp: %s", out.String())
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "doc-agent", Version: "1"}, nil)
	ctl, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + httpAddr + "/mcp",
		HTTPClient: &http.Client{Transport: testkit.Bearer(nil, key)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	started, isErr := callJSON(t, ctl, "raxol_start", nil)
	if isErr {
		t.Fatalf("raxol_start: %v", started)
	}
	ag, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: started["mcp_url"].(string),
		HTTPClient: &http.Client{Transport: testkit.Bearer(nil, started["token"].(string))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Close()
	if res, isErr := callJSON(t, ag, "demo.search.type_into", map[string]any{"text": "doc"}); isErr {
		t.Fatalf("type_into: %v", res)
	}
	if res, isErr := callJSON(t, ctl, "raxol_stop", map[string]any{"id": started["id"]}); isErr {
		t.Fatalf("raxol_stop: %v", res)
	}
}

// bootCommand runs the command with args and environ until the test ends
// (then it must exit 0), waits for its posture line and returns the HTTP
// address it names and its output so far and to come.
func bootCommand(t *testing.T, args []string, environ func(string) string) (httpAddr string, out *testkit.SyncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out = &testkit.SyncBuffer{}
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, environ, out) }()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("exit %d: %s", code, out.String())
		}
	})
	addrRE := regexp.MustCompile(` http=(\S+)`)
	testkit.Eventually(t, 10*time.Second, func() bool { return addrRE.FindStringSubmatch(out.String()) != nil }, "did not boot: %s", out)
	return addrRE.FindStringSubmatch(out.String())[1], out
}
