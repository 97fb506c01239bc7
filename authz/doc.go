// Package authz decides whether an agent's MCP request may proceed: a
// tools/call ("demo.restart.click", "raxol_send_key") at the tool seam, a
// read method (tools/list, resources/read, ...) at the read seam. It is a
// pure library: it holds no connections and asks no human; mcpbridge and
// cmd/raxol-ssh wire it in.
//
// # What flows in and out
//
//	settings ───┐                                          ┌─▶ CheckNetworkBoot, CheckSensitiveBoot ─▶ nil | ErrBootRefused
//	policy file ┼─ Config ─▶ Resolve ─▶ Policy{Tool, Read, ─┤
//	app's Func ─┘                        sources, Describe} └─▶ DecideTool / DecideRead ─▶ Decision{allow | ask+prompt | deny+reason}
//	                                                              ▲                              │
//	                                  name, args, Context{ConnID, Transport}            DenialFor, ReadDeniedMessage
//	                                                                                    (the wire payloads)
//
// In: a [Config] (the operator's allowlists, policy file and environment,
// any [Func] the embedding code supplies, and the names by which errors
// call those settings), then, per request, the tool or method name,
// its arguments and a [Context] of server-derived facts only.
//
// Out: from [Resolve], a [Policy] (or an error naming the invalid setting)
// whose Describe line is the posture log; from the boot gates, whether a
// network listener may start; per request, a [Decision], plus whether the
// policy panicked (it never propagates); for refused requests, the
// JSON-RPC error of a read ([ReadDeniedCode], [ReadDeniedMessage],
// [ReadDenialFor]) and the error-result payload of a call ([DenialFor]).
//
// # Rules
//
// Configuration binds in every environment: an allowlist restricts tools
// in dev exactly as in production. The environment decides only the
// fallback for an unconfigured seam: allow-all outside production; in
// production no tools and only the listing reads ([DefaultProdReadMethods]).
// Operator settings win over the app's own policy (flags > policy file >
// code).
//
// Who decided a seam ([Source]) matters more than how strict it is: only a
// policy configured by an operator or the embedding code opens a network
// listener ([Policy.CheckNetworkBoot]); a framework fallback never does,
// so the gate keeps forcing a decision. An explicit empty allowlist is a
// configured policy that serves nothing.
//
// A nil tool authorizer allows, but a tool annotated sensitive or
// destructiveHint must never run without one ([Policy.CheckSensitiveBoot]
// at boot, [Policy.ToolConfigured] at call time). A nil read authorizer
// allows every read. initialize and ping are never gated.
//
// Approving an ask is the caller's job: it puts the prompt to the human in
// the terminal, and records "allow for the rest of the session" in
// [SessionGrants].
package authz
