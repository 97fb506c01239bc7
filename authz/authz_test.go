package authz

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestKindString(t *testing.T) {
	for _, tc := range []struct {
		k    Kind
		want string
	}{
		{KindAllow, "allow"}, {KindAsk, "ask"}, {KindDeny, "deny"}, {0, "invalid"}, {42, "invalid"},
	} {
		if got := tc.k.String(); got != tc.want {
			t.Errorf("Kind(%d).String() = %q, want %q", int(tc.k), got, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	fixed := func(d Decision) Func { return func(string, map[string]any, Context) Decision { return d } }
	for _, tc := range []struct {
		name     string
		f        Func
		want     Decision
		panicked bool
	}{
		{name: "allow", f: fixed(Allow()), want: Allow()},
		{name: "ask", f: fixed(Ask("Restart?")), want: Ask("Restart?")},
		{name: "ask without prompt", f: fixed(Ask("")), want: Ask("Allow demo.restart.click?")},
		{name: "deny", f: fixed(Deny("nope")), want: Deny("nope")},
		{name: "deny without reason", f: fixed(Deny("")), want: Deny("denied")},
		{name: "zero decision denies", f: fixed(Decision{}), want: Deny("invalid_decision")},
		{name: "unknown kind denies", f: fixed(Decision{Kind: 9}), want: Deny("invalid_decision")},
		{name: "allow drops stray text", f: fixed(Decision{Kind: KindAllow, Reason: "x"}), want: Allow()},
		{name: "panic", f: func(string, map[string]any, Context) Decision { panic("boom") }, want: Deny("policy failed"), panicked: true},
		{name: "panic nil", f: func(string, map[string]any, Context) Decision { panic(nil) }, want: Deny("policy failed"), panicked: true},
		{name: "panic error", f: func(_ string, args map[string]any, _ Context) Decision { return Decision{Kind: args["x"].(Kind)} }, want: Deny("policy failed"), panicked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Policy{Tool: tc.f, Read: tc.f}
			d, panicked := p.DecideTool("demo.restart.click", map[string]any{}, Context{})
			if d != tc.want || panicked != tc.panicked {
				t.Errorf("DecideTool = %+v, %v; want %+v, %v", d, panicked, tc.want, tc.panicked)
			}
			want := tc.want
			if want.Kind == KindAsk && want.Prompt == "Allow demo.restart.click?" {
				want.Prompt = "Allow tools/list?"
			}
			d, panicked = p.DecideRead("tools/list", nil, Context{})
			if d != want || panicked != tc.panicked {
				t.Errorf("DecideRead = %+v, %v; want %+v, %v", d, panicked, want, tc.panicked)
			}
		})
	}
}

func TestDecideNilFuncs(t *testing.T) {
	var p Policy
	if d, panicked := p.DecideTool("demo.restart.click", nil, Context{}); d != Allow() || panicked {
		t.Errorf("nil Tool: DecideTool = %+v, %v; want allow", d, panicked)
	}
	if d, panicked := p.DecideRead("resources/read", nil, Context{}); d != Allow() || panicked {
		t.Errorf("nil Read: DecideRead = %+v, %v; want allow", d, panicked)
	}
	if p.ToolConfigured() {
		t.Error("ToolConfigured() = true for a nil Tool")
	}
	p.Tool = DenyAll("")
	if !p.ToolConfigured() {
		t.Error("ToolConfigured() = false with a Tool")
	}
}

func TestDecidePassesNameArgsAndContext(t *testing.T) {
	var gotName string
	var gotArgs map[string]any
	var gotCtx Context
	f := func(name string, args map[string]any, ctx Context) Decision {
		gotName, gotArgs, gotCtx = name, args, ctx
		return Allow()
	}
	p := Policy{Tool: f, Read: f}
	args := map[string]any{"uri": "demo://state/x"}

	p.DecideRead("resources/read", args, Context{ConnID: "c1", Transport: TransportHTTP})
	if gotName != "resources/read" || gotArgs["uri"] != "demo://state/x" || gotCtx != (Context{ConnID: "c1", Transport: "http"}) {
		t.Errorf("read seam got %q %v %+v", gotName, gotArgs, gotCtx)
	}
	p.DecideTool("demo.x.click", nil, Context{ConnID: "c2"})
	if gotName != "demo.x.click" || gotCtx != (Context{ConnID: "c2", Transport: TransportUnknown}) {
		t.Errorf("tool seam got %q %+v; an empty transport must read as unknown", gotName, gotCtx)
	}
}

// A panicking policy must never take the server down, even when called
// from many goroutines at once.
func TestDecidePanicConcurrent(t *testing.T) {
	p := Policy{Tool: func(string, map[string]any, Context) Decision { panic("boom") }}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if d, panicked := p.DecideTool("t", nil, Context{}); d.Kind != KindDeny || !panicked {
				t.Errorf("got %+v, %v", d, panicked)
			}
		})
	}
	wg.Wait()
}

func TestCheckNetworkBoot(t *testing.T) {
	emptyTools, _ := Allowlist([]string{})
	noReads, _ := ReadAllowlist([]string{})
	for _, tc := range []struct {
		name    string
		p       Policy
		wantErr []string // substrings; nil means boots
		notErr  []string
	}{
		{name: "both configured", p: Policy{Tool: AllowAll(), Read: AllowAll(), ToolSource: SourceConfigured, ReadSource: SourceConfigured}},
		{name: "explicit empty allowlists", p: Policy{Tool: emptyTools, Read: noReads, ToolSource: SourceConfigured, ReadSource: SourceConfigured}},
		{name: "zero policy", p: Policy{}, wantErr: []string{"AllowedTools, PolicyFile, Tool", "AllowedReads, PolicyFile, Read"}},
		{name: "tool default allow-all", p: Policy{Tool: AllowAll(), Read: AllowAll(), ReadSource: SourceConfigured},
			wantErr: []string{"AllowedTools, PolicyFile, Tool"}, notErr: []string{"AllowedReads"}},
		{name: "tool default however strict", p: Policy{Tool: DenyAll("x"), Read: AllowAll(), ReadSource: SourceConfigured},
			wantErr: []string{"AllowedTools, PolicyFile, Tool"}},
		{name: "tool configured but nil", p: Policy{ToolSource: SourceConfigured, Read: AllowAll(), ReadSource: SourceConfigured},
			wantErr: []string{"AllowedTools, PolicyFile, Tool"}},
		{name: "read default however strict", p: Policy{Tool: AllowAll(), ToolSource: SourceConfigured, Read: DenyAll("x")},
			wantErr: []string{"AllowedReads, PolicyFile, Read"}, notErr: []string{"AllowedTools"}},
		{name: "read configured but nil", p: Policy{Tool: AllowAll(), ToolSource: SourceConfigured, ReadSource: SourceConfigured},
			wantErr: []string{"AllowedReads, PolicyFile, Read"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.CheckNetworkBoot()
			if tc.wantErr == nil {
				if err != nil {
					t.Fatalf("CheckNetworkBoot() = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrBootRefused) {
				t.Fatalf("CheckNetworkBoot() = %v, want ErrBootRefused", err)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
			for _, s := range tc.notErr {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error %q names %q, which is configured", err, s)
				}
			}
		})
	}
}

func TestCheckSensitiveBoot(t *testing.T) {
	for _, tc := range []struct {
		name      string
		p         Policy
		sensitive []string
		wantErr   bool
	}{
		{name: "no sensitive tools, no authorizer", p: Policy{}},
		{name: "sensitive tools, no authorizer", p: Policy{}, sensitive: []string{"raxol_send_key", "demo.db.drop"}, wantErr: true},
		{name: "sensitive tools, default authorizer", p: Policy{Tool: AllowAll()}, sensitive: []string{"raxol_send_key"}},
		{name: "sensitive tools, configured authorizer", p: Policy{Tool: DenyAll(""), ToolSource: SourceConfigured}, sensitive: []string{"raxol_send_key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.CheckSensitiveBoot(tc.sensitive)
			if !tc.wantErr {
				if err != nil {
					t.Fatalf("CheckSensitiveBoot = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrBootRefused) {
				t.Fatalf("CheckSensitiveBoot = %v, want ErrBootRefused", err)
			}
			for _, s := range tc.sensitive {
				if !strings.Contains(err.Error(), `"`+s+`"`) {
					t.Errorf("error %q does not name %q", err, s)
				}
			}
		})
	}
}

func TestWireErrors(t *testing.T) {
	if ReadDeniedCode != -32090 {
		t.Errorf("ReadDeniedCode = %d", ReadDeniedCode)
	}
	if got := ReadDeniedMessage("resources/read"); got != "authorization_required: resources/read" {
		t.Errorf("ReadDeniedMessage = %q", got)
	}
	for _, tc := range []struct {
		name string
		d    Decision
		want string
	}{
		{"deny", Deny("not_allowlisted"), `{"error":"authorization_required","tool":"demo.restart.click","decision":"deny","detail":"not_allowlisted"}`},
		{"ask", Ask("Restart a service?"), `{"error":"authorization_required","tool":"demo.restart.click","decision":"ask","detail":"Restart a service?"}`},
	} {
		t.Run("call "+tc.name, func(t *testing.T) {
			b, err := json.Marshal(DenialFor("demo.restart.click", tc.d))
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		d    Decision
		want string
	}{
		{"deny", Deny("not_allowlisted"), `{"error":"authorization_required","method":"resources/read","detail":"not_allowlisted"}`},
		{"ask hides the prompt", Ask("secret prompt"), `{"error":"authorization_required","method":"resources/read","detail":"approval_required"}`},
	} {
		t.Run("read "+tc.name, func(t *testing.T) {
			b, _ := json.Marshal(ReadDenialFor("resources/read", tc.d))
			if string(b) != tc.want {
				t.Errorf("got  %s\nwant %s", b, tc.want)
			}
		})
	}
}

func TestSessionGrants(t *testing.T) {
	var g SessionGrants // zero value usable
	if g.Granted("demo.restart.click") {
		t.Fatal("zero SessionGrants grants something")
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			for j := range 50 {
				tool := fmt.Sprintf("t%d.%d", i, j)
				g.Grant(tool)
				if !g.Granted(tool) {
					t.Errorf("%s not granted after Grant", tool)
				}
				g.Granted("other")
			}
		})
	}
	wg.Wait()
	if !g.Granted("t19.49") || g.Granted("other") {
		t.Error("grants wrong after concurrent use")
	}
}
