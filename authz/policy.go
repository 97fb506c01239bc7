package authz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Denial reasons of the builders.
const (
	reasonDenied         = "denied"
	reasonNotAllowlisted = "not_allowlisted"
	reasonNoRule         = "no_rule"
)

// AllowAll returns a Func that allows everything.
func AllowAll() Func {
	return func(string, map[string]any, Context) Decision { return Allow() }
}

// DenyAll returns a Func that denies everything with reason ("denied" when
// reason is empty).
func DenyAll(reason string) Func {
	if reason == "" {
		reason = reasonDenied
	}
	return func(string, map[string]any, Context) Decision { return Deny(reason) }
}

// Allowlist returns a Func allowing the tools that match one of patterns
// and denying the rest with reason "not_allowlisted". A pattern is an exact
// tool name or a glob over the dot-separated name:
//
//   - '*' matches any run of characters, possibly empty, except '.'
//     ("demo.*.get_*" matches "demo.cpu.get_value", not "demo.a.b.get_x");
//   - '?' matches one character except '.';
//   - '**' matches any run of characters including '.', and must be a
//     whole segment ("demo.**", "**.click", "**"); it may match nothing,
//     so "demo.**" matches "demo." but not "demo".
//
// A pattern may hold only letters, digits and _ - . * ?. An empty pattern,
// any other character, "***", or '**' inside a segment ("a**b") is an error
// naming the pattern. An empty (or nil) list allows nothing.
func Allowlist(patterns []string) (Func, error) {
	m, err := compileMatchers(patterns)
	if err != nil {
		return nil, err
	}
	return func(name string, _ map[string]any, _ Context) Decision {
		if m.match(name) {
			return Allow()
		}
		return Deny(reasonNotAllowlisted)
	}, nil
}

// readMethods are the methods the read seam gates, in protocol order.
// initialize, ping and logging/setLevel are never gated; tools/call is the
// tool seam's.
var readMethods = []string{
	"tools/list",
	"resources/list",
	"resources/templates/list",
	"resources/read",
	"resources/subscribe",
	"resources/unsubscribe",
	"prompts/list",
	"prompts/get",
	"completion/complete",
	// subscriptions/listen (2026-07-28) carries resource updates and list
	// changes on one stream; the go-sdk answers it on initialized sessions
	// too, so it is gated like resources/subscribe.
	"subscriptions/listen",
}

// ReadMethods returns the methods the read seam gates (a fresh slice).
func ReadMethods() []string { return slices.Clone(readMethods) }

// DefaultProdReadMethods are the reads an unconfigured production server
// allows: the three LISTING methods, which reveal names the server
// advertises anyway. prompts/get returns content and completion/complete
// enumerates; resources/read and the subscribe pair stream live state.
// Denying every read instead would leave even an allowlisted tool
// undiscoverable. Treat it as read-only.
var DefaultProdReadMethods = []string{"tools/list", "resources/list", "prompts/list"}

// ReadAllowlist returns a Func allowing exactly the listed read methods and
// denying the rest with reason "not_allowlisted". Each must be one of
// [ReadMethods]; an unknown one is an error naming it and the valid ones.
// An empty (or nil) list allows no read.
func ReadAllowlist(methods []string) (Func, error) {
	allowed := make(map[string]bool, len(methods))
	for _, m := range methods {
		if err := checkReadMethod(m); err != nil {
			return nil, err
		}
		allowed[m] = true
	}
	return func(method string, _ map[string]any, _ Context) Decision {
		if allowed[method] {
			return Allow()
		}
		return Deny(reasonNotAllowlisted)
	}, nil
}

func checkReadMethod(m string) error {
	if slices.Contains(readMethods, m) {
		return nil
	}
	hint := ""
	switch m {
	case "initialize", "ping", "logging/setLevel":
		hint = "; " + m + " is never gated"
	case "tools/call":
		hint = "; tools/call is governed by the tool policy"
	}
	return &configError{msg: fmt.Sprintf("unknown read method %q (valid: %s)%s", m, strings.Join(readMethods, ", "), hint)}
}

// Rule is one entry of an ordered rule list ([Rules]).
type Rule struct {
	// Match is an exact tool name or a glob, as for [Allowlist].
	Match string
	// Decision is KindAllow, KindAsk or KindDeny; it must be set.
	Decision Kind
	// Prompt is the question for KindAsk; empty means "Allow <tool>?".
	Prompt string
	// Reason is the denial reason for KindDeny; empty means "denied".
	Reason string
}

// Rules returns a Func that applies the first rule whose Match matches the
// name, and denies with reason "no_rule" when none does. Patterns are
// validated as for [Allowlist]; a rule without a valid Decision is an
// error. The rules are copied.
func Rules(rules []Rule) (Func, error) {
	type compiled struct {
		m matchers
		d Decision
	}
	cs := make([]compiled, len(rules))
	for i, r := range rules {
		m, err := compileMatchers([]string{r.Match})
		if err != nil {
			return nil, &configError{msg: fmt.Sprintf("rule %d: %v", i, err)}
		}
		var d Decision
		switch r.Decision {
		case KindAllow:
			d = Allow()
		case KindAsk:
			d = Ask(r.Prompt)
		case KindDeny:
			d = Deny(r.Reason)
			if d.Reason == "" {
				d.Reason = reasonDenied
			}
		default:
			return nil, &configError{msg: fmt.Sprintf("rule %d (%q): invalid decision %d (want KindAllow, KindAsk or KindDeny)", i, r.Match, int(r.Decision))}
		}
		cs[i] = compiled{m: m, d: d}
	}
	return func(name string, _ map[string]any, _ Context) Decision {
		for _, c := range cs {
			if c.m.match(name) {
				if c.d.Kind == KindAsk && c.d.Prompt == "" {
					return Ask("Allow " + name + "?")
				}
				return c.d
			}
		}
		return Deny(reasonNoRule)
	}, nil
}

// ---- globs ----

// matchers is a compiled set of patterns: exact names in a set, globs in
// a list.
type matchers struct {
	exact map[string]bool
	globs [][]token
}

func (m matchers) match(name string) bool {
	if m.exact[name] {
		return true
	}
	if len(m.globs) == 0 {
		return false
	}
	rs := []rune(name)
	for _, g := range m.globs {
		if matchGlob(g, rs) {
			return true
		}
	}
	return false
}

type tokenKind uint8

const (
	tokLit   tokenKind = iota // one literal character
	tokOne                    // '?'
	tokStar                   // '*'
	tokStars                  // '**'
)

type token struct {
	kind tokenKind
	r    rune // for tokLit
}

func compileMatchers(patterns []string) (matchers, error) {
	m := matchers{exact: make(map[string]bool)}
	for _, p := range patterns {
		toks, err := compileGlob(p)
		if err != nil {
			return matchers{}, err
		}
		if toks == nil {
			m.exact[p] = true
		} else {
			m.globs = append(m.globs, toks)
		}
	}
	return m, nil
}

// compileGlob validates p and returns its tokens, or nil tokens when p
// holds no wildcard (an exact name).
func compileGlob(p string) ([]token, error) {
	bad := func(why string) error {
		return &configError{msg: fmt.Sprintf("invalid pattern %q: %s", p, why)}
	}
	if p == "" {
		return nil, &configError{msg: `invalid pattern "": empty`}
	}
	for _, r := range p {
		if !validPatternRune(r) {
			return nil, bad(fmt.Sprintf("character %q is not allowed (use letters, digits and _ - . * ?)", r))
		}
	}
	if !strings.ContainsAny(p, "*?") {
		return nil, nil
	}
	var toks []token
	for i := 0; i < len(p); {
		switch c := p[i]; c {
		case '?':
			toks = append(toks, token{kind: tokOne})
			i++
		case '*':
			n := 1
			for i+n < len(p) && p[i+n] == '*' {
				n++
			}
			switch {
			case n > 2:
				return nil, bad(`"***" is not a wildcard (use * within a segment or ** for whole segments)`)
			case n == 2:
				if (i > 0 && p[i-1] != '.') || (i+2 < len(p) && p[i+2] != '.') {
					return nil, bad(`"**" must be a whole dot-separated segment (like "demo.**" or "**.click"); use * within a segment`)
				}
				toks = append(toks, token{kind: tokStars})
			default:
				toks = append(toks, token{kind: tokStar})
			}
			i += n
		default:
			toks = append(toks, token{kind: tokLit, r: rune(c)})
			i++
		}
	}
	return toks, nil
}

func validPatternRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '_' || r == '-' || r == '.' || r == '*' || r == '?'
}

// matchGlob reports whether toks match all of name. It runs in
// O(len(toks)·len(name)) time whatever the pattern, by dynamic programming
// from the end: next[j] reports whether the remaining tokens match
// name[j:].
func matchGlob(toks []token, name []rune) bool {
	n := len(name)
	next := make([]bool, n+1)
	cur := make([]bool, n+1)
	next[n] = true
	for i := len(toks) - 1; i >= 0; i-- {
		t := toks[i]
		cur[n] = (t.kind == tokStar || t.kind == tokStars) && next[n]
		for j := n - 1; j >= 0; j-- {
			switch t.kind {
			case tokLit:
				cur[j] = name[j] == t.r && next[j+1]
			case tokOne:
				cur[j] = name[j] != '.' && next[j+1]
			case tokStar:
				cur[j] = next[j] || (name[j] != '.' && cur[j+1])
			case tokStars:
				cur[j] = next[j] || cur[j+1]
			}
		}
		next, cur = cur, next
	}
	return next[0]
}

// ---- policy files ----

// LoadPolicyFile reads a JSON policy file:
//
//	{
//	  "tools": [
//	    {"match": "demo.*.get_*", "decision": "allow"},
//	    {"match": "demo.restart.click", "decision": "ask", "prompt": "Restart a service?"},
//	    {"match": "**", "decision": "deny", "reason": "not allowed"}
//	  ],
//	  "read_methods": ["tools/list", "resources/list", "resources/read"]
//	}
//
// "tools" is an ordered rule list ([Rules]: first match wins, no match
// denies "no_rule"); a rule has "match" and "decision" ("allow", "ask" or
// "deny"), and optionally "prompt" and "reason". "read_methods" is a
// [ReadAllowlist]. Either key may be absent, and then the returned Func is
// nil: the file does not configure that seam. A file with neither, an
// unknown or repeated field, a value of the wrong type, an unknown
// decision, an invalid pattern or an unknown method is an error naming the
// file, the field and the value.
func LoadPolicyFile(path string) (tool Func, read Func, err error) {
	f, err := loadPolicyFile(path)
	if err != nil {
		return nil, nil, err
	}
	return f.tool, f.read, nil
}

// maxPolicyFile bounds what LoadPolicyFile reads.
const maxPolicyFile = 1 << 20

// policyFile is a parsed policy file.
type policyFile struct {
	path  string
	tool  Func // nil when there is no "tools"
	rules int
	read  Func // nil when there is no "read_methods"
	reads []string
}

func loadPolicyFile(path string) (*policyFile, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, &configError{msg: fmt.Sprintf("policy file %q: %v", path, err), err: err}
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxPolicyFile+1))
	if err != nil {
		return nil, &configError{msg: fmt.Sprintf("policy file %q: %v", path, err), err: err}
	}
	if len(data) > maxPolicyFile {
		return nil, &configError{msg: fmt.Sprintf("policy file %q: larger than %d bytes", path, maxPolicyFile)}
	}
	f, err := parsePolicy(data)
	if err != nil {
		return nil, &configError{msg: fmt.Sprintf("policy file %q: %v", path, err)}
	}
	f.path = path
	return f, nil
}

func parsePolicy(data []byte) (*policyFile, error) {
	fields, err := decodeObject(data, "", []string{"tools", "read_methods"})
	if err != nil {
		return nil, err
	}
	f := &policyFile{}
	if raw, ok := fields["tools"]; ok {
		var items []json.RawMessage
		if isNull(raw) || json.Unmarshal(raw, &items) != nil {
			return nil, fmt.Errorf("tools: want an array of rules, got %s", excerpt(raw))
		}
		rules := make([]Rule, len(items))
		for i, item := range items {
			r, err := parseRule(item, fmt.Sprintf("tools[%d]", i))
			if err != nil {
				return nil, err
			}
			rules[i] = r
		}
		if f.tool, err = Rules(rules); err != nil {
			return nil, err // parseRule validated everything; not reached
		}
		f.rules = len(rules)
	}
	if raw, ok := fields["read_methods"]; ok {
		var methods []string
		if isNull(raw) || json.Unmarshal(raw, &methods) != nil {
			return nil, fmt.Errorf("read_methods: want an array of method names, got %s", excerpt(raw))
		}
		for i, m := range methods {
			if err := checkReadMethod(m); err != nil {
				return nil, fmt.Errorf("read_methods[%d]: %v", i, err)
			}
		}
		if f.read, err = ReadAllowlist(methods); err != nil {
			return nil, err // checked above; not reached
		}
		f.reads = methods
		if f.reads == nil {
			f.reads = []string{}
		}
	}
	if f.tool == nil && f.read == nil {
		return nil, errors.New(`configures nothing: want "tools", "read_methods" or both`)
	}
	return f, nil
}

func parseRule(raw json.RawMessage, at string) (Rule, error) {
	fields, err := decodeObject(raw, at, []string{"match", "decision", "prompt", "reason"})
	if err != nil {
		return Rule{}, err
	}
	str := func(key string, required bool) (string, error) {
		v, ok := fields[key]
		if !ok {
			if required {
				return "", fmt.Errorf("%s: missing field %q", at, key)
			}
			return "", nil
		}
		var s string
		if isNull(v) || json.Unmarshal(v, &s) != nil {
			return "", fmt.Errorf("%s.%s: want a string, got %s", at, key, excerpt(v))
		}
		return s, nil
	}
	var r Rule
	if r.Match, err = str("match", true); err != nil {
		return Rule{}, err
	}
	if _, err := compileGlob(r.Match); err != nil {
		return Rule{}, fmt.Errorf("%s.match: %v", at, err)
	}
	decision, err := str("decision", true)
	if err != nil {
		return Rule{}, err
	}
	switch decision {
	case "allow":
		r.Decision = KindAllow
	case "ask":
		r.Decision = KindAsk
	case "deny":
		r.Decision = KindDeny
	default:
		return Rule{}, fmt.Errorf(`%s.decision: unknown decision %q (want "allow", "ask" or "deny")`, at, decision)
	}
	if r.Prompt, err = str("prompt", false); err != nil {
		return Rule{}, err
	}
	if r.Reason, err = str("reason", false); err != nil {
		return Rule{}, err
	}
	return r, nil
}

// decodeObject decodes one JSON object (and nothing after it) into its
// fields, refusing keys not in known and keys given twice: a policy file
// must mean what it says, and encoding/json would silently keep the last
// of two. at names the object in errors ("" for the top level).
func decodeObject(data []byte, at string, known []string) (map[string]json.RawMessage, error) {
	where := func(format string, args ...any) error {
		msg := fmt.Sprintf(format, args...)
		if at != "" {
			msg = at + ": " + msg
		}
		return errors.New(msg)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		if err != nil {
			return nil, where("want a JSON object: %v", err)
		}
		return nil, where("want a JSON object, got %s", excerpt(data))
	}
	fields := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, where("invalid JSON: %v", err)
		}
		key, _ := tok.(string) // object keys are always strings
		if !slices.Contains(known, key) {
			return nil, where("unknown field %q (want %s)", key, quoteList(known))
		}
		if _, dup := fields[key]; dup {
			return nil, where("field %q given twice", key)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, where("field %q: invalid JSON: %v", key, err)
		}
		fields[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, where("invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, where("unexpected data after the JSON object")
	}
	return fields, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// excerpt shows a JSON value in an error, shortened.
func excerpt(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// ---- configuration ----

// Environments for [Config.Env].
const (
	EnvDev  = "dev"
	EnvProd = "prod"
)

// Settings names the configuration settings in errors and in
// [Policy.Describe]: an embedder names them by its own option fields, a
// command by its flags. Each empty field names the setting by its
// [Config] field ("AllowedTools", "Tool"...).
type Settings struct {
	AllowedTools, AllowedReads, PolicyFile, Env string
	// Tool and Read name the code that can set a seam's policy.
	Tool, Read string
}

func (s Settings) withDefaults() Settings {
	or := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	or(&s.AllowedTools, "AllowedTools")
	or(&s.AllowedReads, "AllowedReads")
	or(&s.PolicyFile, "PolicyFile")
	or(&s.Env, "Env")
	or(&s.Tool, "Tool")
	or(&s.Read, "Read")
	return s
}

// Config is authorization configuration as operators give it (flags,
// environment) plus what the embedding code passes.
type Config struct {
	// Env is EnvDev or EnvProd; anything else is an error. It decides only
	// what an unconfigured seam falls back to.
	Env string
	// AllowedTools are exact tool names and globs
	// ([Allowlist]). Nil means not given; an empty non-nil slice is an
	// explicit empty allowlist, which is configured and allows no tool.
	AllowedTools []string
	// AllowedReads are read methods ([ReadAllowlist]). Nil
	// means not given; empty non-nil allows no read.
	AllowedReads []string
	// PolicyFile is the path of a JSON policy file
	// ([LoadPolicyFile]); empty means none.
	PolicyFile string
	// Tool and Read are the embedding code's (or the served app's) own
	// policies; nil means not given. Given, they count as configured.
	Tool, Read Func
	// Names names the settings in errors and in Describe.
	Names Settings
}

// SplitList splits a comma-separated flag value into entries with
// surrounding spaces trimmed. An empty or all-space value gives an empty
// non-nil slice (an explicit empty list); empty entries ("a,,b") are kept
// so that validation reports them.
func SplitList(s string) []string {
	if strings.TrimSpace(s) == "" {
		return []string{}
	}
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// Resolve turns a Config into a Policy. Configuration binds in every
// environment; per seam the operator wins over the app's built-in policy:
//
//	flag (AllowedTools / AllowedReads)  >  policy file  >  code (Tool / Read)
//
// and any of them makes the seam SourceConfigured. An unconfigured seam
// falls back, with SourceDefault: outside production to [AllowAll]; in
// production to an empty [Allowlist] for tools (no tool runs) and to
// [ReadAllowlist]([DefaultProdReadMethods]) for reads. Describe says which
// happened. An invalid value is an error naming the setting, e.g.
//
//	AllowedTools: invalid pattern "a**b": ...
//
// (named as c.Names says). A policy file is loaded and checked even when flags override both of
// its seams. Errors match [ErrInvalidConfig].
func Resolve(c Config) (Policy, error) {
	n := c.Names.withDefaults()
	var prod bool
	switch c.Env {
	case EnvDev:
	case EnvProd:
		prod = true
	default:
		return Policy{}, &configError{msg: fmt.Sprintf("%s: unknown environment %q (want %q or %q)", n.Env, c.Env, EnvDev, EnvProd)}
	}
	var file *policyFile
	if c.PolicyFile != "" {
		f, err := loadPolicyFile(c.PolicyFile)
		if err != nil {
			return Policy{}, fmt.Errorf("%s: %w", n.PolicyFile, err)
		}
		file = f
	}

	p := Policy{names: n}
	var toolDesc, readDesc string
	switch {
	case c.AllowedTools != nil:
		f, err := Allowlist(c.AllowedTools)
		if err != nil {
			return Policy{}, fmt.Errorf("%s: %w", n.AllowedTools, err)
		}
		p.Tool, p.ToolSource = f, SourceConfigured
		toolDesc = fmt.Sprintf("allowlist %s (configured: %s)", bracket(c.AllowedTools), n.AllowedTools)
	case file != nil && file.tool != nil:
		p.Tool, p.ToolSource = file.tool, SourceConfigured
		toolDesc = fmt.Sprintf("%d rules from %s (configured: %s)", file.rules, file.path, n.PolicyFile)
	case c.Tool != nil:
		p.Tool, p.ToolSource = c.Tool, SourceConfigured
		toolDesc = "the app's own policy (configured)"
	case prod:
		p.Tool, _ = Allowlist(nil)
		p.ToolSource = SourceDefault
		toolDesc = "allowlist [] (unconfigured prod default)"
	default:
		p.Tool, p.ToolSource = AllowAll(), SourceDefault
		toolDesc = "allow-all (unconfigured dev default)"
	}

	switch {
	case c.AllowedReads != nil:
		f, err := ReadAllowlist(c.AllowedReads)
		if err != nil {
			return Policy{}, fmt.Errorf("%s: %w", n.AllowedReads, err)
		}
		p.Read, p.ReadSource = f, SourceConfigured
		readDesc = fmt.Sprintf("%s (configured: %s)", bracket(c.AllowedReads), n.AllowedReads)
	case file != nil && file.read != nil:
		p.Read, p.ReadSource = file.read, SourceConfigured
		readDesc = fmt.Sprintf("%s from %s (configured: %s)", bracket(file.reads), file.path, n.PolicyFile)
	case c.Read != nil:
		p.Read, p.ReadSource = c.Read, SourceConfigured
		readDesc = "the app's own policy (configured)"
	case prod:
		p.Read, _ = ReadAllowlist(DefaultProdReadMethods)
		p.ReadSource = SourceDefault
		readDesc = bracket(DefaultProdReadMethods) + " (unconfigured prod default)"
	default:
		p.Read, p.ReadSource = AllowAll(), SourceDefault
		readDesc = "allow-all (unconfigured dev default)"
	}
	p.Describe = "tools: " + toolDesc + "; reads: " + readDesc
	return p, nil
}

func bracket(xs []string) string { return "[" + strings.Join(xs, " ") + "]" }
