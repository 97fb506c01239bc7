package demo

import "github.com/raxol-ssh/raxol-ssh/authz"

// ToolPolicy is the demo's own authorization policy for tool calls,
// declared here so that the default run boots (an operator's
// allowlist or policy file replaces it): reads and ordinary
// writes are allowed; confirming a restart, the demo's destructive action,
// and pressing keys in the human's terminal are asked of the human; the
// headless-session tools of /mcp are allowed to API key holders.
func ToolPolicy() authz.Func {
	f, err := authz.Rules([]authz.Rule{
		{Match: Name + "." + IDModal + ".confirm", Decision: authz.KindAsk, Prompt: "Restart the selected service? Its in-flight requests will fail."},
		{Match: "raxol_send_key", Decision: authz.KindAsk, Prompt: "Press keys in your terminal?"},
		{Match: Name + ".**", Decision: authz.KindAllow},
		{Match: "raxol_screenshot", Decision: authz.KindAllow},
		{Match: "raxol_show", Decision: authz.KindAllow}, // the live view as an MCP App: read only
		{Match: "raxol_wait_for", Decision: authz.KindAllow},
		{Match: "discover_tools", Decision: authz.KindAllow},
		// The server-level /mcp endpoint (served only with API keys,
		// the operator's opt-in): agents holding a key may start, list and
		// stop their own headless sessions.
		{Match: "raxol_start", Decision: authz.KindAllow},
		{Match: "raxol_stop", Decision: authz.KindAllow},
		{Match: "raxol_list", Decision: authz.KindAllow},
	})
	if err != nil {
		panic("demo: invalid tool policy: " + err.Error()) // a programming error, caught by tests
	}
	return f
}

// ReadPolicy allows every read method: the demo holds no secrets it shows
// agents (the API token is never projected).
func ReadPolicy() authz.Func { return authz.AllowAll() }
