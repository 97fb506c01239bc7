package authz

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBuilders(t *testing.T) {
	if d := AllowAll()("anything", nil, Context{}); d != Allow() {
		t.Errorf("AllowAll = %+v", d)
	}
	if d := DenyAll("closed")("anything", nil, Context{}); d != Deny("closed") {
		t.Errorf("DenyAll(closed) = %+v", d)
	}
	if d := DenyAll("")("anything", nil, Context{}); d != Deny("denied") {
		t.Errorf(`DenyAll("") = %+v`, d)
	}
}

func TestGlobs(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		yes     []string
		no      []string
	}{
		{"demo.restart.click", []string{"demo.restart.click"}, []string{"demo.restart.clicks", "demo.restart", "demoXrestart.click"}},
		{"demo.*.get_*", []string{"demo.cpu.get_value", "demo.cpu.get_", "demo..get_x"}, []string{"demo.a.b.get_x", "demo.cpu.set_value", "other.cpu.get_value", "demo.cpu.get_x.y"}},
		{"demo.*", []string{"demo.x", "demo."}, []string{"demo.x.click", "demo", "demox"}},
		{"*", []string{"raxol_screenshot", ""}, []string{"demo.x"}},
		{"**", []string{"", "raxol_send_key", "demo.a.b.c"}, nil},
		{"demo.**", []string{"demo.x", "demo.x.click", "demo."}, []string{"demo", "demonstration.x", "other.demo.x"}},
		{"**.click", []string{"demo.restart.click", ".click"}, []string{"click", "demo.restart.clicked", "demo.click.x"}},
		{"demo.**.click", []string{"demo.a.click", "demo.a.b.click", "demo..click"}, []string{"demo.click", "demo.a.clicks"}},
		{"demo.?pu.get", []string{"demo.cpu.get", "demo.gpu.get"}, []string{"demo.pu.get", "demo.ccpu.get", "demo..pu.get"}},
		{"a?b", []string{"axb", "a-b"}, []string{"a.b", "ab", "axxb"}},
		{"raxol_*", []string{"raxol_screenshot", "raxol_send_key", "raxol_"}, []string{"raxol.x", "demo.raxol_x"}},
		{"*-*", []string{"a-b", "-"}, []string{"ab", "a.b-c"}},
		{"*.*.*", []string{"a.b.c", "..", "demo.restart.click"}, []string{"a.b", "a.b.c.d"}},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			f, err := Allowlist([]string{tc.pattern})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range tc.yes {
				if d := f(name, nil, Context{}); d != Allow() {
					t.Errorf("%q does not match %q: %+v", tc.pattern, name, d)
				}
			}
			for _, name := range tc.no {
				if d := f(name, nil, Context{}); d != Deny("not_allowlisted") {
					t.Errorf("%q matches %q: %+v", tc.pattern, name, d)
				}
			}
		})
	}
}

func TestAllowlist(t *testing.T) {
	f, err := Allowlist([]string{"raxol_screenshot", "demo.*.get_*"})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Decision{
		"raxol_screenshot":   Allow(),
		"demo.cpu.get_value": Allow(),
		"raxol_send_key":     Deny("not_allowlisted"),
		"demo.restart.click": Deny("not_allowlisted"),
	} {
		if got := f(name, nil, Context{}); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}
	for _, empty := range [][]string{nil, {}} {
		f, err := Allowlist(empty)
		if err != nil {
			t.Fatal(err)
		}
		if got := f("raxol_screenshot", nil, Context{}); got != Deny("not_allowlisted") {
			t.Errorf("empty allowlist %#v: %+v", empty, got)
		}
	}
}

func TestInvalidPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		why     string
	}{
		{"", "empty"},
		{"demo restart", "not allowed"},
		{"demo/x", "not allowed"},
		{"demo.[ab]", "not allowed"},
		{"démo.x", "not allowed"},
		{"***", `"***"`},
		{"demo.***", `"***"`},
		{"a**b", "whole dot-separated segment"},
		{"demo.**x", "whole dot-separated segment"},
		{"x**.demo", "whole dot-separated segment"},
	} {
		t.Run(tc.pattern, func(t *testing.T) {
			for _, build := range []func() error{
				func() error { _, err := Allowlist([]string{"ok.name", tc.pattern}); return err },
				func() error { _, err := Rules([]Rule{{Match: tc.pattern, Decision: KindAllow}}); return err },
			} {
				err := build()
				if err == nil {
					t.Fatalf("pattern %q accepted", tc.pattern)
				}
				if !errors.Is(err, ErrInvalidConfig) {
					t.Errorf("error %v is not ErrInvalidConfig", err)
				}
				if !strings.Contains(err.Error(), `invalid pattern "`+tc.pattern+`"`) || !strings.Contains(err.Error(), tc.why) {
					t.Errorf("error %q does not name pattern %q and %q", err, tc.pattern, tc.why)
				}
			}
		})
	}
}

func TestReadAllowlist(t *testing.T) {
	f, err := ReadAllowlist(DefaultProdReadMethods)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ReadMethods() {
		want := Deny("not_allowlisted")
		if m == "tools/list" || m == "resources/list" || m == "prompts/list" {
			want = Allow()
		}
		if got := f(m, nil, Context{}); got != want {
			t.Errorf("%s: %+v, want %+v", m, got, want)
		}
	}
	if len(ReadMethods()) != 10 {
		t.Errorf("ReadMethods() = %v, want the ten read methods", ReadMethods())
	}
	ms := ReadMethods()
	ms[0] = "mutated"
	if ReadMethods()[0] != "tools/list" {
		t.Error("ReadMethods returns shared storage")
	}

	for _, tc := range []struct{ method, hint string }{
		{"tools/lists", ""},
		{"", ""},
		{"tools/*", ""},
		{"tools/call", "tool policy"},
		{"initialize", "never gated"},
	} {
		_, err := ReadAllowlist([]string{"tools/list", tc.method})
		if err == nil {
			t.Fatalf("method %q accepted", tc.method)
		}
		msg := err.Error()
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(msg, `unknown read method "`+tc.method+`"`) ||
			!strings.Contains(msg, "completion/complete") || !strings.Contains(msg, tc.hint) {
			t.Errorf("method %q: error %q should name it, list the valid ones and hint %q", tc.method, msg, tc.hint)
		}
	}
}

func TestRules(t *testing.T) {
	f, err := Rules([]Rule{
		{Match: "demo.*.get_*", Decision: KindAllow},
		{Match: "demo.restart.click", Decision: KindAsk, Prompt: "Restart a service?"},
		{Match: "demo.db.*", Decision: KindAsk},
		{Match: "demo.**", Decision: KindDeny, Reason: "not allowed"},
		{Match: "raxol_send_key", Decision: KindDeny},
		{Match: "raxol_screenshot", Decision: KindAllow}, // shadowed by nothing
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Decision{
		"demo.cpu.get_value": Allow(),
		"demo.restart.click": Ask("Restart a service?"),
		"demo.db.drop":       Ask("Allow demo.db.drop?"),
		"demo.db.get_rows":   Allow(), // first match wins
		"demo.other.click":   Deny("not allowed"),
		"raxol_send_key":     Deny("denied"),
		"raxol_screenshot":   Allow(),
		"other.x.y":          Deny("no_rule"),
	} {
		if got := f(name, nil, Context{}); got != want {
			t.Errorf("%s: %+v, want %+v", name, got, want)
		}
	}

	if f, err := Rules(nil); err != nil || f("x", nil, Context{}) != Deny("no_rule") {
		t.Errorf("Rules(nil) = %v; must deny no_rule", err)
	}

	rules := []Rule{{Match: "a", Decision: KindAllow}}
	f, _ = Rules(rules)
	rules[0].Decision = KindDeny
	if f("a", nil, Context{}) != Allow() {
		t.Error("Rules does not copy its rules")
	}

	for _, k := range []Kind{0, 7} {
		_, err := Rules([]Rule{{Match: "ok", Decision: KindAllow}, {Match: "demo.x", Decision: k}})
		if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `rule 1 ("demo.x"): invalid decision`) {
			t.Errorf("decision %d: error %v", int(k), err)
		}
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadPolicyFile(t *testing.T) {
	path := writeFile(t, `{
  "tools": [
    {"match": "demo.*.get_*", "decision": "allow"},
    {"match": "demo.restart.click", "decision": "ask", "prompt": "Restart a service?"},
    {"match": "**", "decision": "deny", "reason": "not allowed"}
  ],
  "read_methods": ["tools/list", "resources/list", "resources/read"]
}`)
	tool, read, err := LoadPolicyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Decision{
		"demo.cpu.get_value": Allow(),
		"demo.restart.click": Ask("Restart a service?"),
		"raxol_send_key":     Deny("not allowed"),
	} {
		if got := tool(name, nil, Context{}); got != want {
			t.Errorf("tool %s: %+v, want %+v", name, got, want)
		}
	}
	for m, want := range map[string]Decision{
		"resources/read": Allow(),
		"prompts/get":    Deny("not_allowlisted"),
	} {
		if got := read(m, nil, Context{}); got != want {
			t.Errorf("read %s: %+v, want %+v", m, got, want)
		}
	}

	t.Run("tools only", func(t *testing.T) {
		tool, read, err := LoadPolicyFile(writeFile(t, `{"tools": []}`))
		if err != nil || tool == nil || read != nil {
			t.Fatalf("got tool=%v read=%v err=%v; want tool and no read", tool != nil, read != nil, err)
		}
		if tool("raxol_screenshot", nil, Context{}) != Deny("no_rule") {
			t.Error("empty tools must deny")
		}
	})
	t.Run("reads only", func(t *testing.T) {
		tool, read, err := LoadPolicyFile(writeFile(t, `{"read_methods": []}`))
		if err != nil || tool != nil || read == nil {
			t.Fatalf("got tool=%v read=%v err=%v; want read and no tool", tool != nil, read != nil, err)
		}
		if read("tools/list", nil, Context{}) != Deny("not_allowlisted") {
			t.Error("empty read_methods must deny")
		}
	})
}

func TestLoadPolicyFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		want    []string // substrings of the error after the file name
	}{
		{"unknown top field", `{"tool": []}`, []string{`unknown field "tool"`, `"tools"`, `"read_methods"`}},
		{"unknown rule field", `{"tools": [{"match": "a", "decision": "allow"}, {"match": "b", "decison": "deny"}]}`, []string{`tools[1]: unknown field "decison"`}},
		{"bad decision", `{"tools": [{"match": "a", "decision": "maybe"}]}`, []string{`tools[0].decision: unknown decision "maybe"`}},
		{"decision case", `{"tools": [{"match": "a", "decision": "Allow"}]}`, []string{`tools[0].decision: unknown decision "Allow"`}},
		{"missing decision", `{"tools": [{"match": "a"}]}`, []string{`tools[0]: missing field "decision"`}},
		{"missing match", `{"tools": [{"decision": "allow"}]}`, []string{`tools[0]: missing field "match"`}},
		{"bad pattern", `{"tools": [{"match": "a**b", "decision": "allow"}]}`, []string{`tools[0].match: invalid pattern "a**b"`}},
		{"match not a string", `{"tools": [{"match": 3, "decision": "allow"}]}`, []string{`tools[0].match: want a string, got 3`}},
		{"prompt not a string", `{"tools": [{"match": "a", "decision": "ask", "prompt": null}]}`, []string{`tools[0].prompt: want a string, got null`}},
		{"rule not an object", `{"tools": ["a"]}`, []string{`tools[0]: want a JSON object, got "a"`}},
		{"tools not an array", `{"tools": {"match": "a"}}`, []string{`tools: want an array of rules`}},
		{"tools null", `{"tools": null}`, []string{`tools: want an array of rules, got null`}},
		{"unknown method", `{"read_methods": ["tools/list", "resources/raed"]}`, []string{`read_methods[1]: unknown read method "resources/raed"`, "resources/read"}},
		{"methods not strings", `{"read_methods": [1]}`, []string{`read_methods: want an array of method names`}},
		{"duplicate field", `{"tools": [], "tools": [{"match": "**", "decision": "allow"}]}`, []string{`field "tools" given twice`}},
		{"duplicate rule field", `{"tools": [{"match": "a", "decision": "deny", "decision": "allow"}]}`, []string{`tools[0]: field "decision" given twice`}},
		{"configures nothing", `{}`, []string{"configures nothing"}},
		{"not an object", `[]`, []string{"want a JSON object"}},
		{"not JSON", `tools: []`, []string{"want a JSON object"}},
		{"truncated", `{"tools": [`, []string{"invalid JSON"}},
		{"trailing data", `{"tools": []} {}`, []string{"unexpected data after the JSON object"}},
		{"empty", ``, []string{"want a JSON object"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.content)
			tool, read, err := LoadPolicyFile(path)
			if err == nil {
				t.Fatal("accepted")
			}
			if tool != nil || read != nil {
				t.Error("returned a Func with an error")
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v is not ErrInvalidConfig", err)
			}
			prefix := `policy file "` + path + `": `
			if !strings.HasPrefix(err.Error(), prefix) {
				t.Errorf("error %q does not start with %q", err, prefix)
			}
			for _, s := range tc.want {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}

	t.Run("unreadable", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "missing.json")
		_, _, err := LoadPolicyFile(path)
		if err == nil || !errors.Is(err, os.ErrNotExist) || !errors.Is(err, ErrInvalidConfig) ||
			!strings.HasPrefix(err.Error(), `policy file "`+path+`": `) {
			t.Errorf("error %v should name the file and wrap ErrNotExist and ErrInvalidConfig", err)
		}
	})
	t.Run("directory", func(t *testing.T) {
		_, _, err := LoadPolicyFile(t.TempDir())
		if err == nil || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("error %v, want ErrInvalidConfig", err)
		}
	})
	t.Run("too large", func(t *testing.T) {
		_, _, err := LoadPolicyFile(writeFile(t, `{"tools": []}`+strings.Repeat(" ", maxPolicyFile)))
		if err == nil || !strings.Contains(err.Error(), "larger than") {
			t.Errorf("error %v, want a size error", err)
		}
	})
}

func TestSplitList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"  ", []string{}},
		{"a", []string{"a"}},
		{" demo.*.get_* , raxol_screenshot ", []string{"demo.*.get_*", "raxol_screenshot"}},
		{"a,,b", []string{"a", "", "b"}},
	} {
		got := SplitList(tc.in)
		if got == nil || strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("SplitList(%q) = %#v, want %#v", tc.in, got, tc.want)
		}
	}
	if _, err := Resolve(Config{Env: EnvDev, AllowedTools: SplitList("a,,b")}); err == nil {
		t.Error("an empty entry must not pass")
	}
}

// decisions evaluates p on a fixed set of tools and reads.
func decisions(p Policy) (tools, reads map[string]Kind) {
	tools, reads = map[string]Kind{}, map[string]Kind{}
	for _, name := range []string{"demo.cpu.get_value", "demo.restart.click", "raxol_screenshot", "raxol_send_key"} {
		d, _ := p.DecideTool(name, nil, Context{})
		tools[name] = d.Kind
	}
	for _, m := range ReadMethods() {
		d, _ := p.DecideRead(m, nil, Context{})
		reads[m] = d.Kind
	}
	return tools, reads
}

func TestResolveDefaults(t *testing.T) {
	t.Run("dev unconfigured allows all, by default", func(t *testing.T) {
		p, err := Resolve(Config{Env: EnvDev})
		if err != nil {
			t.Fatal(err)
		}
		if p.ToolSource != SourceDefault || p.ReadSource != SourceDefault || p.Tool == nil || p.Read == nil {
			t.Errorf("sources %v/%v, funcs %v/%v", p.ToolSource, p.ReadSource, p.Tool != nil, p.Read != nil)
		}
		tools, reads := decisions(p)
		for k, v := range tools {
			if v != KindAllow {
				t.Errorf("tool %s: %v", k, v)
			}
		}
		for k, v := range reads {
			if v != KindAllow {
				t.Errorf("read %s: %v", k, v)
			}
		}
		if p.Describe != "tools: allow-all (unconfigured dev default); reads: allow-all (unconfigured dev default)" {
			t.Errorf("Describe = %q", p.Describe)
		}
		if err := p.CheckNetworkBoot(); !errors.Is(err, ErrBootRefused) {
			t.Errorf("dev default boots the network: %v", err)
		}
	})
	t.Run("prod unconfigured allows no tool and the listing reads, by default", func(t *testing.T) {
		p, err := Resolve(Config{Env: EnvProd})
		if err != nil {
			t.Fatal(err)
		}
		if p.ToolSource != SourceDefault || p.ReadSource != SourceDefault {
			t.Errorf("sources %v/%v", p.ToolSource, p.ReadSource)
		}
		tools, reads := decisions(p)
		for k, v := range tools {
			if v != KindDeny {
				t.Errorf("tool %s: %v", k, v)
			}
		}
		for k, v := range reads {
			want := KindDeny
			if k == "tools/list" || k == "resources/list" || k == "prompts/list" {
				want = KindAllow
			}
			if v != want {
				t.Errorf("read %s: %v, want %v", k, v, want)
			}
		}
		if !strings.Contains(p.Describe, "unconfigured prod default") || !strings.Contains(p.Describe, "[tools/list resources/list prompts/list]") {
			t.Errorf("Describe = %q", p.Describe)
		}
		if err := p.CheckNetworkBoot(); !errors.Is(err, ErrBootRefused) {
			t.Errorf("prod default boots the network: %v", err)
		}
	})
}

// Configuration binds in every environment: the same settings give the
// same decisions in dev and in prod.
func TestResolveBindsInEveryEnvironment(t *testing.T) {
	file := writeFile(t, `{"tools": [{"match": "demo.restart.click", "decision": "ask", "prompt": "Restart?"}], "read_methods": ["resources/read"]}`)
	for _, tc := range []struct {
		name string
		c    Config
	}{
		{"flags", Config{AllowedTools: []string{"demo.*.get_*"}, AllowedReads: []string{"tools/list"}}},
		{"explicit empty flags", Config{AllowedTools: []string{}, AllowedReads: []string{}}},
		{"file", Config{PolicyFile: file}},
		{"code", Config{Tool: DenyAll("code"), Read: DenyAll("code")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev, prod := tc.c, tc.c
			dev.Env, prod.Env = EnvDev, EnvProd
			pd, err := Resolve(dev)
			if err != nil {
				t.Fatal(err)
			}
			pp, err := Resolve(prod)
			if err != nil {
				t.Fatal(err)
			}
			dt, dr := decisions(pd)
			pt, pr := decisions(pp)
			for k := range dt {
				if dt[k] != pt[k] {
					t.Errorf("tool %s: dev %v, prod %v", k, dt[k], pt[k])
				}
			}
			for k := range dr {
				if dr[k] != pr[k] {
					t.Errorf("read %s: dev %v, prod %v", k, dr[k], pr[k])
				}
			}
			if pd.Describe != pp.Describe {
				t.Errorf("Describe differs: %q vs %q", pd.Describe, pp.Describe)
			}
			for _, p := range []Policy{pd, pp} {
				if p.ToolSource != SourceConfigured || p.ReadSource != SourceConfigured {
					t.Errorf("sources %v/%v, want configured", p.ToolSource, p.ReadSource)
				}
				if err := p.CheckNetworkBoot(); err != nil {
					t.Errorf("configured policy refused: %v", err)
				}
			}
		})
	}

	p, err := Resolve(Config{Env: EnvDev, AllowedTools: []string{"demo.*.get_*"}})
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := p.DecideTool("demo.restart.click", nil, Context{}); d != Deny("not_allowlisted") {
		t.Errorf("an allowlist in dev lets an unlisted tool through: %+v", d)
	}
	if d, _ := p.DecideTool("demo.cpu.get_value", nil, Context{}); d != Allow() {
		t.Errorf("listed tool: %+v", d)
	}
	// The read seam, not configured here, still falls back to the dev default.
	if p.ReadSource != SourceDefault || !strings.Contains(p.Describe, "reads: allow-all (unconfigured dev default)") {
		t.Errorf("read seam: %v, %q", p.ReadSource, p.Describe)
	}
	if err := p.CheckNetworkBoot(); err == nil || !strings.Contains(err.Error(), "AllowedReads") || strings.Contains(err.Error(), "AllowedTools or") {
		t.Errorf("CheckNetworkBoot = %v; want a refusal naming only the read setting", err)
	}
}

func TestResolvePrecedence(t *testing.T) {
	file := writeFile(t, `{"tools": [{"match": "**", "decision": "deny", "reason": "from file"}], "read_methods": ["prompts/get"]}`)
	toolsOnlyFile := writeFile(t, `{"tools": [{"match": "**", "decision": "deny", "reason": "from file"}]}`)
	code := func(reason string) Func { return DenyAll(reason) }
	const tool = "demo.x.click" // every source denies it, each with its own reason
	for _, tc := range []struct {
		name       string
		c          Config
		toolReason string
		readAllow  string // the one read method allowed, or "" when the code's DenyAll applies
		describe   []string
	}{
		{"flags over file over code", Config{AllowedTools: []string{"a"}, AllowedReads: []string{"resources/read"}, PolicyFile: file, Tool: code("code"), Read: code("code")},
			"not_allowlisted", "resources/read", []string{"allowlist [a] (configured: AllowedTools)", "reads: [resources/read] (configured: AllowedReads)"}},
		{"file over code", Config{PolicyFile: file, Tool: code("code"), Read: code("code")},
			"from file", "prompts/get", []string{"tools: 1 rules from " + file + " (configured: PolicyFile)", "reads: [prompts/get] from " + file}},
		{"code alone", Config{Tool: code("code"), Read: code("code")},
			"code", "", []string{"tools: the app's own policy (configured)", "reads: the app's own policy (configured)"}},
		{"flags per seam", Config{AllowedReads: []string{"resources/read"}, PolicyFile: file, Tool: code("code")},
			"from file", "resources/read", nil},
		{"file without reads leaves code", Config{PolicyFile: toolsOnlyFile, Tool: code("code"), Read: code("code")},
			"from file", "", []string{"reads: the app's own policy (configured)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, env := range []string{EnvDev, EnvProd} {
				c := tc.c
				c.Env = env
				p, err := Resolve(c)
				if err != nil {
					t.Fatal(err)
				}
				if d, _ := p.DecideTool(tool, nil, Context{}); d.Kind != KindDeny || d.Reason != tc.toolReason {
					t.Errorf("%s: tool decision %+v, want deny %q", env, d, tc.toolReason)
				}
				for _, m := range ReadMethods() {
					d, _ := p.DecideRead(m, nil, Context{})
					if (d.Kind == KindAllow) != (m == tc.readAllow) {
						t.Errorf("%s: read %s: %+v", env, m, d)
					}
				}
				for _, s := range tc.describe {
					if !strings.Contains(p.Describe, s) {
						t.Errorf("%s: Describe %q lacks %q", env, p.Describe, s)
					}
				}
				if p.ToolSource != SourceConfigured || p.ReadSource != SourceConfigured || p.CheckNetworkBoot() != nil {
					t.Errorf("%s: not configured: %v/%v %v", env, p.ToolSource, p.ReadSource, p.CheckNetworkBoot())
				}
			}
		})
	}
}

func TestResolveInvalid(t *testing.T) {
	good := writeFile(t, `{"tools": []}`)
	bad := writeFile(t, `{"tools": [{"match": "x", "decision": "perhaps"}]}`)
	missing := filepath.Join(t.TempDir(), "nope.json")
	for _, tc := range []struct {
		name string
		c    Config
		want string // the error's prefix
	}{
		{"bad glob", Config{Env: EnvProd, AllowedTools: []string{"demo.*", "a**b"}}, `AllowedTools: invalid pattern "a**b"`},
		{"empty entry", Config{Env: EnvDev, AllowedTools: []string{""}}, `AllowedTools: invalid pattern ""`},
		{"unknown method", Config{Env: EnvDev, AllowedReads: []string{"tools/list", "resources/write"}}, `AllowedReads: unknown read method "resources/write"`},
		{"bad file", Config{Env: EnvDev, PolicyFile: bad}, `PolicyFile: policy file "` + bad + `": tools[0].decision: unknown decision "perhaps"`},
		{"missing file", Config{Env: EnvDev, PolicyFile: missing}, `PolicyFile: policy file "` + missing + `": `},
		{"bad file overridden by flags still fails", Config{Env: EnvDev, PolicyFile: bad, AllowedTools: []string{}, AllowedReads: []string{}}, `PolicyFile: `},
		{"unknown env", Config{Env: "staging", PolicyFile: good}, `Env: unknown environment "staging"`},
		{"empty env", Config{}, `Env: unknown environment ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Resolve(tc.c)
			if err == nil {
				t.Fatalf("accepted: %+v", p.Describe)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v is not ErrInvalidConfig", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error %q does not start with %q", err, tc.want)
			}
			if p.Tool != nil || p.Read != nil {
				t.Error("returned a usable Policy with an error")
			}
		})
	}
}

// TestSettingNames: errors, Describe and the boot gates name each setting
// as Config.Names says, and by its Config field when it says nothing.
func TestSettingNames(t *testing.T) {
	names := Settings{AllowedTools: "--tools-flag", AllowedReads: "Options.Reads", PolicyFile: "the file", Env: "ENV", Tool: "App.ToolPolicy", Read: "App.ReadPolicy"}
	if _, err := Resolve(Config{Env: "x", Names: names}); err == nil || !strings.HasPrefix(err.Error(), "ENV: ") {
		t.Fatalf("env error %v, want it named ENV", err)
	}
	if _, err := Resolve(Config{Env: EnvDev, AllowedTools: []string{"a**b"}, Names: names}); err == nil || !strings.HasPrefix(err.Error(), "--tools-flag: ") {
		t.Fatalf("tools error %v, want it named --tools-flag", err)
	}
	p, err := Resolve(Config{Env: EnvDev, AllowedReads: []string{"tools/list"}, Names: names})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Describe, "(configured: Options.Reads)") {
		t.Fatalf("Describe %q does not name the reads setting", p.Describe)
	}
	err = p.CheckNetworkBoot()
	if err == nil || !strings.Contains(err.Error(), "set one of --tools-flag, the file, App.ToolPolicy") || strings.Contains(err.Error(), "a read policy") {
		t.Fatalf("boot error %v, want the tool settings named", err)
	}
	if err := p.CheckSensitiveBoot([]string{"x"}); err != nil {
		t.Fatalf("sensitive gate with a tool policy: %v", err)
	}
	var bare Policy
	if err := bare.CheckSensitiveBoot([]string{"x"}); err == nil || !strings.Contains(err.Error(), "set one of AllowedTools, PolicyFile, Tool") {
		t.Fatalf("a hand-built policy's gate error %v, want the Config fields named", err)
	}
}
