package authz

import (
	"fmt"
	"strings"
	"sync"
)

// Kind is what a policy decided. The zero Kind is not a decision: a [Func]
// returning it is treated as a denial (see [Policy.DecideTool]), and
// [Rules] rejects a [Rule] that leaves it unset.
type Kind int

const (
	// KindAllow runs the call or serves the read.
	KindAllow Kind = iota + 1
	// KindAsk needs a human's approval first; see [Decision.Prompt].
	KindAsk
	// KindDeny refuses; see [Decision.Reason].
	KindDeny
)

// String returns "allow", "ask" or "deny", and "invalid" for anything else.
func (k Kind) String() string {
	switch k {
	case KindAllow:
		return "allow"
	case KindAsk:
		return "ask"
	case KindDeny:
		return "deny"
	}
	return "invalid"
}

// Decision is the answer to one request.
type Decision struct {
	Kind Kind
	// Prompt is the question put to the human, for KindAsk.
	Prompt string
	// Reason says why, for KindDeny. It is sent to the client: keep it free
	// of anything the client should not learn.
	Reason string
}

// Allow returns an allowing decision.
func Allow() Decision { return Decision{Kind: KindAllow} }

// Ask returns a decision that needs a human's approval, with the question
// to show them.
func Ask(prompt string) Decision { return Decision{Kind: KindAsk, Prompt: prompt} }

// Deny returns a refusal with the reason the client is told.
func Deny(reason string) Decision { return Decision{Kind: KindDeny, Reason: reason} }

// Transports, as the server declares them in [Context.Transport].
const (
	TransportHTTP    = "http"    // MCP Streamable HTTP
	TransportSSE     = "sse"     // MCP HTTP+SSE
	TransportStdio   = "stdio"   // standard input and output
	TransportUnknown = "unknown" // nobody declared one
)

// Context is what a policy may know about a request besides its name and
// arguments. It holds only facts the server derived itself, never anything
// a client asserts (a client name or version, a header): a policy keyed on
// a claim is bypassed by claiming something else. Do not add such fields.
type Context struct {
	// ConnID identifies the connection (MCP session) the request arrived on.
	ConnID string
	// Transport is one of the Transport constants; empty reads as
	// TransportUnknown.
	Transport string
}

// Func decides one request. For the tool seam, name is the tool name
// ("demo.restart.click", "raxol_send_key") and args its arguments; for the
// read seam, name is the METHOD name ("tools/list", "resources/read") and
// args its params. A Func is called concurrently from many connections and
// must not modify args. It may panic: [Policy.DecideTool] and
// [Policy.DecideRead] turn a panic into a denial.
type Func func(name string, args map[string]any, ctx Context) Decision

// Source says who decided a seam's policy.
type Source int

const (
	// SourceDefault is a fallback the framework picked because nobody
	// configured the seam. It never opens a network listener
	// ([Policy.CheckNetworkBoot]), however strict it is. It is the zero
	// value, so a Policy built by hand without saying who decided it
	// counts as unconfigured.
	SourceDefault Source = iota
	// SourceConfigured is a policy an operator (flags, policy file) or the
	// embedding code decided.
	SourceConfigured
)

func (s Source) String() string {
	if s == SourceConfigured {
		return "configured"
	}
	return "default"
}

// Policy is a resolved authorization posture: one Func per seam and who
// decided it. [Resolve] builds one from operator configuration; embedders
// may build one by hand. A Policy is immutable once built and safe for
// concurrent use.
type Policy struct {
	// Tool decides tools/call (and, per entry, the tools/list filter).
	// Nil means no tool authorizer: DecideTool allows, and sensitive tools
	// must be refused by the caller (see ToolConfigured).
	Tool Func
	// Read decides the read methods listed by ReadMethods. Nil allows
	// every read.
	Read Func
	// ToolSource and ReadSource say who decided Tool and Read. The zero
	// value is SourceDefault.
	ToolSource Source
	ReadSource Source
	// Describe is one line for the posture log, e.g.
	// "tools: allowlist [demo.*.get_*] (configured: AllowedTools); reads: [tools/list resources/list] (configured: AllowedReads)",
	// with the settings named as Config.Names says.
	Describe string

	names Settings // how the boot gates name the settings; set by Resolve
}

// DecideTool decides a tools/call of tool name with args. With no tool
// authorizer it allows; the caller must still refuse a sensitive tool when
// ToolConfigured reports false. A panic in the policy becomes
// Deny("policy failed") with panicked true, for the caller to log; it never
// propagates. A decision whose Kind is not one of the three becomes a
// denial; an Ask without a prompt gets "Allow <name>?", a Deny without a
// reason gets "denied".
func (p Policy) DecideTool(name string, args map[string]any, ctx Context) (d Decision, panicked bool) {
	if p.Tool == nil {
		return Allow(), false
	}
	return decide(p.Tool, name, args, ctx)
}

// DecideRead decides a read method (one of ReadMethods) with its params,
// exactly as DecideTool does a tool; with no read authorizer it allows.
// The read seam has no approval path: a caller treats KindAsk as a denial.
func (p Policy) DecideRead(method string, args map[string]any, ctx Context) (d Decision, panicked bool) {
	if p.Read == nil {
		return Allow(), false
	}
	return decide(p.Read, method, args, ctx)
}

// ToolConfigured reports whether there is a tool authorizer at all, of any
// source. A tool annotated sensitive or destructiveHint must not run when
// it reports false.
func (p Policy) ToolConfigured() bool { return p.Tool != nil }

// reasonPolicyFailed is the denial reason of a policy that panicked.
const reasonPolicyFailed = "policy failed"

func decide(f Func, name string, args map[string]any, ctx Context) (d Decision, panicked bool) {
	defer func() {
		if r := recover(); r != nil {
			d, panicked = Deny(reasonPolicyFailed), true
		}
	}()
	if ctx.Transport == "" {
		ctx.Transport = TransportUnknown
	}
	return normalize(name, f(name, args, ctx)), false
}

// normalize makes sure a decision is one of the three, with the text its
// kind needs, so that nothing downstream sees an empty prompt or reason or
// mistakes a zero Decision for an allow.
func normalize(name string, d Decision) Decision {
	switch d.Kind {
	case KindAllow:
		return Allow()
	case KindAsk:
		if d.Prompt == "" {
			d.Prompt = "Allow " + name + "?"
		}
		return Ask(d.Prompt)
	case KindDeny:
		if d.Reason == "" {
			d.Reason = reasonDenied
		}
		return Deny(d.Reason)
	}
	return Deny("invalid_decision")
}

// CheckNetworkBoot reports whether p may serve MCP over a network
// listener. Both seams must have been decided by an operator or the
// embedding code (SourceConfigured, non-nil Func); a framework default
// never qualifies, however strict, so the gate keeps forcing a decision.
// An explicit empty allowlist qualifies: serving nothing is a choice. The
// error names the settings to add and wraps [ErrBootRefused].
func (p Policy) CheckNetworkBoot() error {
	n := p.names.withDefaults()
	var missing []string
	if p.ToolSource != SourceConfigured || p.Tool == nil {
		missing = append(missing, fmt.Sprintf("a tool policy (set one of %s, %s, %s)", n.AllowedTools, n.PolicyFile, n.Tool))
	}
	if p.ReadSource != SourceConfigured || p.Read == nil {
		missing = append(missing, fmt.Sprintf("a read policy (set one of %s, %s, %s)", n.AllowedReads, n.PolicyFile, n.Read))
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: serving MCP over the network needs %s set by the operator or the app; an unconfigured default does not count",
		ErrBootRefused, strings.Join(missing, " and "))
}

// CheckSensitiveBoot refuses to boot when sensitive tools (annotated
// sensitive or destructiveHint) are registered and there is no tool
// authorizer. The error names the tools and wraps [ErrBootRefused].
func (p Policy) CheckSensitiveBoot(sensitiveTools []string) error {
	if len(sensitiveTools) == 0 || p.Tool != nil {
		return nil
	}
	n := p.names.withDefaults()
	return fmt.Errorf("%w: sensitive tools %s would run without a tool authorizer; set one of %s, %s, %s",
		ErrBootRefused, quoteList(sensitiveTools), n.AllowedTools, n.PolicyFile, n.Tool)
}

// ReadDeniedCode is the JSON-RPC error code of a denied read. It avoids
// -32000…-32002 and -32603, which clients treat as retryable.
const ReadDeniedCode = -32090

// ReadDeniedMessage is the JSON-RPC error message of a denied read:
// "authorization_required: <method>".
func ReadDeniedMessage(method string) string { return "authorization_required: " + method }

// ReadDenial is the JSON-RPC error data of a denied read.
type ReadDenial struct {
	Error  string `json:"error"` // always "authorization_required"
	Method string `json:"method"`
	Detail string `json:"detail"`
}

// ReadDenialFor returns the error data for a read of method refused by d.
// Detail is the reason for a deny; for an ask (which reads cannot put to a
// human) it is "approval_required", and the prompt is not echoed.
func ReadDenialFor(method string, d Decision) ReadDenial {
	detail := d.Reason
	if d.Kind == KindAsk {
		detail = "approval_required"
	}
	return ReadDenial{Error: authorizationRequired, Method: method, Detail: detail}
}

// CallDenial is the payload of a refused tools/call, sent as an error
// result:
//
//	{"error":"authorization_required","tool":"demo.restart.click","decision":"ask","detail":"Restart a service?"}
type CallDenial struct {
	Error    string `json:"error"` // always "authorization_required"
	Tool     string `json:"tool"`
	Decision string `json:"decision"` // "deny" or "ask"
	Detail   string `json:"detail"`   // the reason, or the prompt
}

const authorizationRequired = "authorization_required"

// DenialFor returns the payload for a call of tool refused by d: for an
// ask (no human could approve it) decision "ask" and the prompt as detail;
// otherwise decision "deny" and the reason. Do not call it with an allow.
func DenialFor(tool string, d Decision) CallDenial {
	if d.Kind == KindAsk {
		return CallDenial{Error: authorizationRequired, Tool: tool, Decision: KindAsk.String(), Detail: d.Prompt}
	}
	return CallDenial{Error: authorizationRequired, Tool: tool, Decision: KindDeny.String(), Detail: d.Reason}
}

// SessionGrants holds the tools a human allowed "for the rest of the
// session" to one client (keep one per client: a grant never carries to
// another agent). The zero value is empty and ready; it is safe for concurrent
// use and must not be copied after first use.
type SessionGrants struct {
	mu    sync.Mutex
	tools map[string]struct{} // guarded by mu; nil until the first Grant
}

// Grant allows tool for the rest of the session.
func (g *SessionGrants) Grant(tool string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.tools == nil {
		g.tools = make(map[string]struct{})
	}
	g.tools[tool] = struct{}{}
}

// Granted reports whether tool was granted for the session.
func (g *SessionGrants) Granted(tool string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.tools[tool]
	return ok
}

// Revoke forgets every grant (e.g. the session's token was rotated).
func (g *SessionGrants) Revoke() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tools = nil
}
