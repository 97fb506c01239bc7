package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/demo"
	"github.com/raxol-ssh/raxol-ssh/internal/testkit"
	"github.com/raxol-ssh/raxol-ssh/lens"
	"github.com/raxol-ssh/raxol-ssh/server"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// bareApp is the demo without a policy of its own: it needs the
// operator's.
func bareApp() server.App {
	return server.App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }}
}

// policyApp is the demo with its own declared policy.
func policyApp() server.App {
	return server.App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, Projections: demo.Projections(), ToolPolicy: demo.ToolPolicy(), ReadPolicy: demo.ReadPolicy()}
}

// bootServer is a server made by bootNew; it is shut down when the test
// ends unless the test did it.
type bootServer struct {
	*server.Server
	once sync.Once
}

func (b *bootServer) shutdown(t testing.TB) {
	b.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := b.Server.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
}

// bootNew calls server.New for app with testOptions.
func bootNew(t *testing.T, app server.App, opts server.Options) (*bootServer, error) {
	t.Helper()
	srv, err := server.New(app, testOptions(t, opts))
	if err != nil {
		if srv != nil {
			t.Errorf("server.New returned a server with its error %v", err)
		}
		return nil, err
	}
	b := &bootServer{Server: srv}
	t.Cleanup(func() { b.shutdown(t) })
	return b, nil
}

// bootKeys writes an authorized_keys file with one fresh key, as
// production requires.
func bootKeys(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "authorized_keys")
	writeAuthorizedKeys(t, path, newKey(t))
	return path
}

// bootFile writes a policy file and returns its path.
func bootFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBootGateRefusesUnconfiguredPolicy: the MCP listener never starts on
// a framework fallback, in dev or prod; the error wraps ErrBootRefused and
// names exactly the settings still missing.
func TestBootGateRefusesUnconfiguredPolicy(t *testing.T) {
	t.Parallel()
	toolsOnly := `{"tools":[{"match":"demo.*.get_*","decision":"allow"}]}`
	readsOnly := `{"read_methods":["tools/list"]}`
	for _, tc := range []struct {
		name    string
		app     server.App
		opts    func(t *testing.T) server.Options
		names   []string // settings the error must name
		notName []string // settings already given, which it must not ask for
	}{
		{
			name:  "dev, app without policy, no settings",
			app:   bareApp(),
			opts:  func(*testing.T) server.Options { return server.Options{Env: server.EnvDev} },
			names: []string{"Options.MCP.AllowedTools", "Options.MCP.PolicyFile", "Options.MCP.AllowedReads", "App.ToolPolicy", "App.ReadPolicy", "Options.MCP.ToolAuthorizer"},
		},
		{
			name:  "default env, app without policy, no settings",
			app:   bareApp(),
			opts:  func(*testing.T) server.Options { return server.Options{} },
			names: []string{"Options.MCP.AllowedTools", "Options.MCP.AllowedReads"},
		},
		{
			name: "dev, only --mcp-allowed-tools",
			app:  bareApp(),
			opts: func(*testing.T) server.Options {
				return server.Options{Env: server.EnvDev, MCP: server.MCPOptions{AllowedTools: []string{"demo.*.get_*"}}}
			},
			names:   []string{"Options.MCP.AllowedReads"},
			notName: []string{"Options.MCP.AllowedTools"},
		},
		{
			name: "dev, only --mcp-allowed-read-methods",
			app:  bareApp(),
			opts: func(*testing.T) server.Options {
				return server.Options{Env: server.EnvDev, MCP: server.MCPOptions{AllowedReads: []string{"tools/list"}}}
			},
			names:   []string{"Options.MCP.AllowedTools"},
			notName: []string{"Options.MCP.AllowedReads"},
		},
		{
			name: "dev, a policy file with tools only",
			app:  bareApp(),
			opts: func(t *testing.T) server.Options {
				return server.Options{Env: server.EnvDev, MCP: server.MCPOptions{PolicyFile: bootFile(t, toolsOnly)}}
			},
			names:   []string{"Options.MCP.AllowedReads"},
			notName: []string{"Options.MCP.AllowedTools"},
		},
		{
			name: "dev, a policy file with reads only",
			app:  bareApp(),
			opts: func(t *testing.T) server.Options {
				return server.Options{Env: server.EnvDev, MCP: server.MCPOptions{PolicyFile: bootFile(t, readsOnly)}}
			},
			names:   []string{"Options.MCP.AllowedTools"},
			notName: []string{"Options.MCP.AllowedReads"},
		},
		{
			name: "dev, the embedder's tool authorizer only",
			app:  bareApp(),
			opts: func(*testing.T) server.Options {
				return server.Options{Env: server.EnvDev, MCP: server.MCPOptions{ToolAuthorizer: authz.DenyAll("")}}
			},
			names:   []string{"Options.MCP.AllowedReads"},
			notName: []string{"Options.MCP.AllowedTools"},
		},
		{
			name: "dev, the app's read policy only",
			app:  server.App{Name: demo.Name, New: func(ui.Identity) ui.Model { return demo.New() }, ReadPolicy: demo.ReadPolicy()},
			opts: func(*testing.T) server.Options {
				return server.Options{Env: server.EnvDev}
			},
			names:   []string{"Options.MCP.AllowedTools"},
			notName: []string{"Options.MCP.AllowedReads"},
		},
		{
			// The prod fallback (no tools, three listing reads) is strict,
			// and still never enough.
			name: "prod, app without policy, no settings",
			app:  bareApp(),
			opts: func(t *testing.T) server.Options {
				return server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: bootKeys(t)}}
			},
			names: []string{"Options.MCP.AllowedTools", "Options.MCP.AllowedReads"},
		},
		{
			name: "prod, only --mcp-allowed-tools",
			app:  bareApp(),
			opts: func(t *testing.T) server.Options {
				return server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: bootKeys(t)}, MCP: server.MCPOptions{AllowedTools: []string{}}}
			},
			names:   []string{"Options.MCP.AllowedReads"},
			notName: []string{"Options.MCP.AllowedTools"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := bootNew(t, tc.app, tc.opts(t))
			if err == nil {
				t.Fatal("server.New succeeded without a configured policy")
			}
			t.Logf("refused: %v", err)
			if !errors.Is(err, authz.ErrBootRefused) {
				t.Fatalf("error %q does not match authz.ErrBootRefused", err)
			}
			if errors.Is(err, authz.ErrInvalidConfig) {
				t.Errorf("a boot refusal matches ErrInvalidConfig: %v", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "server: ") {
				t.Errorf("error %q is not prefixed server:", msg)
			}
			for _, s := range tc.names {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not name %s", msg, s)
				}
			}
			for _, s := range tc.notName {
				if strings.Contains(msg, s) {
					t.Errorf("error %q asks for %s, which was given", msg, s)
				}
			}
		})
	}
}

// TestBootGateAcceptsConfiguredPolicy: a policy someone chose boots, in
// dev and prod; an explicit empty allowlist counts as a choice.
func TestBootGateAcceptsConfiguredPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		app  server.App
		opts func(t *testing.T) server.Options
	}{
		{"dev, the demo's own policy", policyApp(), func(*testing.T) server.Options { return server.Options{Env: server.EnvDev} }},
		{"prod, the demo's own policy and authorized keys", policyApp(), func(t *testing.T) server.Options {
			return server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: bootKeys(t)}}
		}},
		{"dev, explicit empty allowlists", bareApp(), func(*testing.T) server.Options {
			return server.Options{Env: server.EnvDev, MCP: server.MCPOptions{AllowedTools: []string{}, AllowedReads: []string{}}}
		}},
		{"prod, explicit empty tool allowlist", bareApp(), func(t *testing.T) server.Options {
			return server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: bootKeys(t)}, MCP: server.MCPOptions{AllowedTools: []string{}, AllowedReads: []string{"tools/list"}}}
		}},
		{"prod, operator flags replace the app's policy", policyApp(), func(t *testing.T) server.Options {
			return server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: bootKeys(t)}, MCP: server.MCPOptions{AllowedTools: []string{"demo.*.get_*"}, AllowedReads: []string{"tools/list"}}}
		}},
		{"dev, a policy file with both seams", bareApp(), func(t *testing.T) server.Options {
			return server.Options{Env: server.EnvDev, MCP: server.MCPOptions{PolicyFile: bootFile(t, `{"tools":[{"match":"**","decision":"deny"}],"read_methods":[]}`)}}
		}},
		{"prod, the embedder's authorizers", bareApp(), func(t *testing.T) server.Options {
			return server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: bootKeys(t)}, MCP: server.MCPOptions{ToolAuthorizer: authz.DenyAll(""), ReadAuthorizer: authz.DenyAll("")}}
		}},
		{"dev, a file's tools and a flag's reads", bareApp(), func(t *testing.T) server.Options {
			return server.Options{Env: server.EnvDev, MCP: server.MCPOptions{PolicyFile: bootFile(t, `{"tools":[{"match":"demo.*.get_*","decision":"allow"}]}`), AllowedReads: []string{"tools/list"}}}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := bootNew(t, tc.app, tc.opts(t)); err != nil {
				t.Fatalf("server.New: %v", err)
			}
		})
	}
}

// TestInvalidConfigurationStopsTheBoot: an invalid setting is an error
// naming the setting and the value, whatever else is configured.
func TestInvalidConfigurationStopsTheBoot(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-policy.json")
	for _, tc := range []struct {
		name    string
		app     server.App
		opts    func(t *testing.T) (server.Options, []string) // and what the error must name
		invalid bool                                          // errors.Is(err, authz.ErrInvalidConfig)
		is      error                                         // or this
	}{
		{
			name: "a bad glob", app: policyApp(), invalid: true,
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{MCP: server.MCPOptions{AllowedTools: []string{"demo.*.get_*", "a**b"}}}, []string{"Options.MCP.AllowedTools", `"a**b"`}
			},
		},
		{
			name: "an empty pattern", app: policyApp(), invalid: true,
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{MCP: server.MCPOptions{AllowedTools: authz.SplitList("demo.*,,raxol_screenshot")}}, []string{"Options.MCP.AllowedTools", `invalid pattern ""`}
			},
		},
		{
			name: "a pattern with a space", app: policyApp(), invalid: true,
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{MCP: server.MCPOptions{AllowedTools: []string{"demo.search.type into"}}}, []string{"Options.MCP.AllowedTools", `"demo.search.type into"`}
			},
		},
		{
			name: "tools/call as a read method", app: policyApp(), invalid: true,
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{MCP: server.MCPOptions{AllowedReads: []string{"tools/list", "tools/call"}}}, []string{"Options.MCP.AllowedReads", `"tools/call"`}
			},
		},
		{
			name: "an unknown read method, app without policy", app: bareApp(), invalid: true,
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{MCP: server.MCPOptions{AllowedTools: []string{}, AllowedReads: []string{"resources/write"}}}, []string{"Options.MCP.AllowedReads", `"resources/write"`}
			},
		},
		{
			name: "a policy file with an unknown decision", app: policyApp(), invalid: true,
			opts: func(t *testing.T) (server.Options, []string) {
				p := bootFile(t, `{"tools":[{"match":"demo.**","decision":"maybe"}],"read_methods":["tools/list"]}`)
				return server.Options{MCP: server.MCPOptions{PolicyFile: p}}, []string{"Options.MCP.PolicyFile", p, `"maybe"`, "tools[0].decision"}
			},
		},
		{
			name: "a policy file with a bad glob", app: policyApp(), invalid: true,
			opts: func(t *testing.T) (server.Options, []string) {
				p := bootFile(t, `{"tools":[{"match":"a**b","decision":"allow"}]}`)
				return server.Options{MCP: server.MCPOptions{PolicyFile: p}}, []string{"Options.MCP.PolicyFile", p, `"a**b"`}
			},
		},
		{
			name: "a policy file with an unknown field", app: policyApp(), invalid: true,
			opts: func(t *testing.T) (server.Options, []string) {
				p := bootFile(t, `{"tools":[],"read_method":["tools/list"]}`)
				return server.Options{MCP: server.MCPOptions{PolicyFile: p}}, []string{"Options.MCP.PolicyFile", p, `"read_method"`}
			},
		},
		{
			name: "a policy file that configures nothing", app: policyApp(), invalid: true,
			opts: func(t *testing.T) (server.Options, []string) {
				p := bootFile(t, `{}`)
				return server.Options{MCP: server.MCPOptions{PolicyFile: p}}, []string{"Options.MCP.PolicyFile", p}
			},
		},
		{
			// Checked even though flags override both of its seams.
			name: "a bad policy file under overriding flags", app: policyApp(), invalid: true,
			opts: func(t *testing.T) (server.Options, []string) {
				p := bootFile(t, `{"tools":[{"match":"**","decision":"sometimes"}]}`)
				return server.Options{MCP: server.MCPOptions{PolicyFile: p, AllowedTools: []string{}, AllowedReads: []string{}}}, []string{"Options.MCP.PolicyFile", p, `"sometimes"`}
			},
		},
		{
			name: "a missing policy file", app: policyApp(), invalid: true, is: os.ErrNotExist,
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{MCP: server.MCPOptions{PolicyFile: missing}}, []string{"Options.MCP.PolicyFile", missing}
			},
		},
		{
			name: "a missing policy file in prod", app: bareApp(), invalid: true, is: os.ErrNotExist,
			opts: func(t *testing.T) (server.Options, []string) {
				return server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: bootKeys(t)}, MCP: server.MCPOptions{PolicyFile: missing}}, []string{"Options.MCP.PolicyFile", missing}
			},
		},
		{
			name: "an unknown lens mode", app: policyApp(), is: lens.ErrUnknownMode,
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{MCP: server.MCPOptions{LensMode: "sideways"}}, []string{"Options.MCP.LensMode", `"sideways"`}
			},
		},
		{
			name: "a negative tool count", app: policyApp(),
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{MCP: server.MCPOptions{MaxTools: -1}}, []string{"Options.MCP.MaxTools", "-1"}
			},
		},
		{
			name: "an unknown environment", app: policyApp(),
			opts: func(*testing.T) (server.Options, []string) {
				return server.Options{Env: "staging"}, []string{`"staging"`}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts, names := tc.opts(t)
			_, err := bootNew(t, tc.app, opts)
			if err == nil {
				t.Fatal("server.New succeeded with an invalid setting")
			}
			t.Logf("refused: %v", err)
			msg := err.Error()
			for _, s := range names {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not name %s", msg, s)
				}
			}
			if tc.invalid && !errors.Is(err, authz.ErrInvalidConfig) {
				t.Errorf("error %q does not match authz.ErrInvalidConfig", msg)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q does not match %v", msg, tc.is)
			}
			if errors.Is(err, authz.ErrBootRefused) {
				t.Errorf("an invalid setting is reported as a boot refusal: %q", msg)
			}
		})
	}
}

// bootAgent connects a go-sdk client to a session's Streamable endpoint
// with its token.
func bootAgent(t *testing.T, httpAddr string, se *session.Session) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "gate-agent", Version: "1.0"}, nil)
	hc := &http.Client{Transport: testkit.Bearer(nil, se.Token())}
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + httpAddr + "/sessions/" + se.ID + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("agent connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// bootCall calls a tool and returns its payload and whether it is an
// error result.
func bootCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		out = map[string]any{"text": text}
	}
	return out, res.IsError
}

func bootTools(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// requireDenied checks a call was refused by the tool policy with decision
// deny.
func requireDenied(t *testing.T, out map[string]any, isErr bool, tool, detail string) {
	t.Helper()
	if !isErr || out["error"] != "authorization_required" || out["decision"] != "deny" || out["tool"] != tool || out["detail"] != detail {
		t.Errorf("%s: %v (isError %v), want authorization_required, decision deny, detail %q", tool, out, isErr, detail)
	}
}

// TestEmptyAllowlistBootsAndServesNothing: an explicit empty allowlist is
// configured (it boots) and serves no tool: nothing listed, every call
// denied.
func TestEmptyAllowlistBootsAndServesNothing(t *testing.T) {
	t.Parallel()
	srv, err := bootNew(t, bareApp(), server.Options{MCP: server.MCPOptions{AllowedTools: []string{}, AllowedReads: []string{"tools/list"}}})
	if err != nil {
		t.Fatalf("server.New with an explicit empty allowlist: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	se, end, err := srv.StartHeadless(session.Owner{User: "gate"})
	if err != nil {
		t.Fatal(err)
	}
	defer end()
	cs := bootAgent(t, srv.HTTPAddr(), se)

	if names := bootTools(t, cs); len(names) != 0 {
		t.Errorf("tools/list under an empty allowlist: %v", names)
	}
	out, isErr := bootCall(t, cs, "demo.search.type_into", map[string]any{"text": "agent"})
	requireDenied(t, out, isErr, "demo.search.type_into", "not_allowlisted")
	out, isErr = bootCall(t, cs, "demo.search.get_value", nil)
	requireDenied(t, out, isErr, "demo.search.get_value", "not_allowlisted")
	out, isErr = bootCall(t, cs, "raxol_screenshot", nil)
	requireDenied(t, out, isErr, "raxol_screenshot", "not_allowlisted")
	if v := searchValue(t, se); v != "" {
		t.Errorf("search value %q after denied calls", v)
	}
	// Reads beyond the allowlist are refused with -32090.
	_, err = cs.ListResources(context.Background(), nil)
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != authz.ReadDeniedCode || we.Message != "authorization_required: resources/list" {
		t.Errorf("resources/list outside the read allowlist: %v", err)
	}
}

// TestConfigurationBindsInDevAsInProd: operator settings replace the app's
// own policy and bind the same way in both environments.
func TestConfigurationBindsInDevAsInProd(t *testing.T) {
	t.Parallel()
	for _, env := range []string{server.EnvDev, server.EnvProd} {
		t.Run(env, func(t *testing.T) {
			t.Parallel()
			opts := server.Options{Env: env, MCP: server.MCPOptions{AllowedTools: []string{"demo.*.get_*"}, AllowedReads: []string{"tools/list"}, LensMode: string(lens.ModeAll), MaxTools: 500}}
			if env == server.EnvProd {
				opts.SSH.AuthorizedKeysFile = bootKeys(t)
			}
			// The demo's own policy would allow demo.** : the flags win.
			srv, err := bootNew(t, policyApp(), opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			se, end, err := srv.StartHeadless(session.Owner{User: "gate"})
			if err != nil {
				t.Fatal(err)
			}
			defer end()
			cs := bootAgent(t, srv.HTTPAddr(), se)

			out, isErr := bootCall(t, cs, "demo.search.get_value", nil)
			if isErr {
				t.Fatalf("demo.search.get_value under demo.*.get_*: %v", out)
			}
			// The call runs; the reads allow only tools/list, so its answer
			// carries nothing of the widget's state (issue 24).
			if w, _ := out["withheld"].(map[string]any); w["result"] == nil || out["result"] != nil || out["state"] != nil {
				t.Errorf("get_value under reads [tools/list] = %v, want its result and state withheld", out)
			}
			out, isErr = bootCall(t, cs, "demo.search.type_into", map[string]any{"text": "agent"})
			requireDenied(t, out, isErr, "demo.search.type_into", "not_allowlisted")
			out, isErr = bootCall(t, cs, "raxol_send_key", map[string]any{"keys": []any{"tab"}})
			requireDenied(t, out, isErr, "raxol_send_key", "not_allowlisted")
			if v := searchValue(t, se); v != "" {
				t.Errorf("search value %q after a denied type_into", v)
			}
			names := bootTools(t, cs)
			if !slices.Contains(names, "demo.search.get_value") {
				t.Errorf("allowed tool demo.search.get_value not listed: %v", names)
			}
			for _, n := range names {
				if !strings.HasPrefix(n, "demo.") || !strings.Contains(n, ".get_") || strings.Count(n, ".") != 2 {
					t.Errorf("tools/list holds %s, which demo.*.get_* does not allow", n)
				}
			}
			if slices.Contains(names, "demo.search.type_into") {
				t.Errorf("denied tool listed: %v", names)
			}
		})
	}
}

// TestPostureLogNamesThePolicy: the "serving" line states the resolved
// policy and who configured it.
func TestPostureLogNamesThePolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		app  server.App
		opts func(t *testing.T) (server.Options, string) // and the description
	}{
		{"the demo's own policy", policyApp(), func(*testing.T) (server.Options, string) {
			return server.Options{}, "tools: the app's own policy (configured); reads: the app's own policy (configured)"
		}},
		{"flags", policyApp(), func(*testing.T) (server.Options, string) {
			return server.Options{MCP: server.MCPOptions{AllowedTools: []string{"demo.*.get_*", "raxol_screenshot"}, AllowedReads: []string{"tools/list", "resources/list"}}},
				"tools: allowlist [demo.*.get_* raxol_screenshot] (configured: Options.MCP.AllowedTools); reads: [tools/list resources/list] (configured: Options.MCP.AllowedReads)"
		}},
		{"explicit empty lists in prod", bareApp(), func(t *testing.T) (server.Options, string) {
			return server.Options{Env: server.EnvProd, SSH: server.SSHOptions{AuthorizedKeysFile: bootKeys(t)}, MCP: server.MCPOptions{AllowedTools: []string{}, AllowedReads: []string{}}},
				"tools: allowlist [] (configured: Options.MCP.AllowedTools); reads: [] (configured: Options.MCP.AllowedReads)"
		}},
		{"a policy file", bareApp(), func(t *testing.T) (server.Options, string) {
			p := bootFile(t, `{"tools":[{"match":"demo.*.get_*","decision":"allow"},{"match":"demo.modal.confirm","decision":"ask"}],"read_methods":["tools/list"]}`)
			return server.Options{MCP: server.MCPOptions{PolicyFile: p}},
				"tools: 2 rules from " + p + " (configured: Options.MCP.PolicyFile); reads: [tools/list] from " + p + " (configured: Options.MCP.PolicyFile)"
		}},
		{"a flag over the app's reads", policyApp(), func(*testing.T) (server.Options, string) {
			return server.Options{MCP: server.MCPOptions{AllowedTools: []string{"demo.**"}}},
				"tools: allowlist [demo.**] (configured: Options.MCP.AllowedTools); reads: the app's own policy (configured)"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts, desc := tc.opts(t)
			var logs testkit.SyncBuffer
			opts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
			srv, err := bootNew(t, tc.app, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			srv.shutdown(t)
			var line string
			for _, l := range strings.Split(logs.String(), "\n") {
				if strings.Contains(l, `msg="raxol-ssh serving"`) {
					line = l
				}
			}
			if line == "" {
				t.Fatalf("no posture line in the log:\n%s", logs.String())
			}
			if want := "mcp_policy=" + strconv.Quote(desc); !strings.Contains(line, want) {
				t.Errorf("posture line\n%s\ndoes not contain\n%s", line, want)
			}
			if env := opts.Env; env != "" && !strings.Contains(line, "env="+env) {
				t.Errorf("posture line does not state env=%s: %s", env, line)
			}
		})
	}
}
