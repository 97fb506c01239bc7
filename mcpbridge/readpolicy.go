package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
)

// The read policy on every answer, not only on the read methods.
//
// What a read method returns reaches a client by other paths as well:
// raxol_send_key and raxol_wait_for answer with the screen (and whether
// it matched says what it holds), a widget's tools answer with
// its state (and their errors may describe it), the context resource holds
// the model projections, the widgets in the lens and the activity, and
// discover_tools lists tools. Each kind of content is governed by the read
// that would return it, decided as that read (a URI as a resources/read
// of it):
//
//	content                                      governed by
//	the screen text                              raxol://session/screen
//	a widget's state: a widget tool's result,    raxol://session/tree
//	  state and error text (tool_error, and a
//	  hosted program's not_applied); the
//	  context's "widgets"; raxol_show's view
//	a model projection (the context's "model")   <app>://state/<name>
//	the activity (the context's "activity",      raxol://session/activity
//	  "recent"; raxol_show's "announce")
//	tool names and descriptions (discover_tools) tools/list
//
// A client that may not make that read gets the answer without that part
// and a "withheld" object saying what was left out and why; the call
// itself runs as the tool policy decides. Tool answers pass through
// [sessionServer.withhold], resource content through [resources.content] with the
// reader's [readView], and a subscription (whose updates are patches of
// one content for every subscriber) needs every part readable when it is
// made and again for every update ([resources.covers], [sessionServer.withholdUpdates]).

// readToolsList governs tool names and descriptions.
const readToolsList = "tools/list"

// readView decides reads for one client. A nil view reads everything: the
// content subscribers share, who could read every part of it to subscribe.
type readView struct {
	gate *Gate
	actx authz.Context
}

// readViewOf is the view of the client that sent req.
func (c *sessionServer) readViewOf(req mcp.Request) *readView {
	return &readView{gate: c.gate, actx: c.clientContext(req)}
}

// check is nil when the client may make read (a URI, decided as a
// resources/read of it, or a read method), else the -32090 error that
// read would get. Refusals are counted; allows are not (they stand for no
// request of the client's).
func (v *readView) check(read string) error {
	if v == nil {
		return nil
	}
	if isURI(read) {
		return v.gate.decide("resources/read", map[string]any{"uri": read}, v.actx, false)
	}
	return v.gate.decide(read, map[string]any{}, v.actx, false)
}

func (v *readView) may(read string) bool { return v.check(read) == nil }

func isURI(read string) bool { return strings.Contains(read, "://") }

// withheldBecause says why a part was left out.
func withheldBecause(read string) string {
	if isURI(read) {
		return "withheld: the read policy does not let this client read " + read
	}
	return "withheld: the read policy does not allow " + read
}

// answerRead is the read that governs what a tool's answer carries, and
// the fields of its answer that are the call's own outcome, never
// withheld.
func (c *sessionServer) answerRead(tool string) (read string, outcome []string) {
	switch tool {
	case ToolSendKey:
		return URIScreen, []string{"pressed"}
	case ToolScreenshot, ToolWaitFor:
		// Whether it matched says what the screen holds, too.
		return URIScreen, nil
	case ToolDiscover:
		return readToolsList, nil
	case ToolShow:
		// The view is the widgets' state, as HTML.
		return URITree, nil
	}
	// A widget's tool, or a name that is none: whatever it answers is the
	// widget's state.
	return URITree, nil
}

// withhold is the receiving middleware that holds every tool answer to
// the read policy (see the table above): inside the gate, so a refused
// call's denial passes as it is, and around every tool, session tools and
// derived ones alike.
func (c *sessionServer) withhold(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/call" {
			return res, err
		}
		r, ok := req.(*mcp.CallToolRequest)
		cr, isResult := res.(*mcp.CallToolResult)
		if !ok || r.Params == nil || !isResult || cr == nil {
			return res, err
		}
		read, outcome := c.answerRead(r.Params.Name)
		return filterAnswer(cr, r.Params.Name, read, outcome, c.readViewOf(req)), nil
	}
}

// filterAnswer is res as a client with view v may see it: when v may not
// make read, a JSON answer keeps only its outcome fields and says what
// was withheld, an error whose text comes from the widget or the app
// ([describesState]) loses that text, and any other answer is refused.
func filterAnswer(res *mcp.CallToolResult, tool, read string, outcome []string, v *readView) *mcp.CallToolResult {
	if res.IsError {
		kind := errorKind(res)
		if !describesState(kind) || v.may(read) {
			return res // the call's outcome, not the content of a read
		}
		return errorResult(kind, "the call was refused; its reason is "+withheldBecause(read)+" (it may describe the widget's state)")
	}
	if v.may(read) {
		return res
	}
	fields, ok := answerFields(res)
	if !ok {
		// Not an answer this knows the parts of: none of it is the
		// call's outcome.
		return DenialResult(tool, authz.Deny("the read policy does not allow "+readLabel(read)))
	}
	out := make(map[string]any, len(outcome)+1)
	withheld := map[string]any{}
	for k, val := range fields {
		if slices.Contains(outcome, k) {
			out[k] = val
		} else {
			withheld[k] = withheldBecause(read)
		}
	}
	if len(withheld) > 0 {
		out["withheld"] = withheld
	}
	return jsonResult(out)
}

// describesState says whether an error of kind carries text from the
// widget or the app that may describe its state: a widget's own error
// (tool_error), and what a hosted program's fold said of a change it did
// not make (not_applied: "the input holds ...", "label ... matches
// several items (...)"). The other kinds are the bridge's own words.
func describesState(kind string) bool {
	return kind == ErrKindToolError || kind == ErrKindNotApplied
}

func readLabel(read string) string {
	if isURI(read) {
		return "reading " + read
	}
	return read
}

// errorKind is the "error" of a tool error result's structured content.
func errorKind(res *mcp.CallToolResult) string {
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		return ""
	}
	k, _ := m["error"].(string)
	return k
}

// answerFields decodes a JSON object answer (jsonResult's) into its
// fields, numbers kept exact.
func answerFields(res *mcp.CallToolResult) (map[string]json.RawMessage, bool) {
	var raw []byte
	switch sc := res.StructuredContent.(type) {
	case json.RawMessage:
		raw = sc
	case map[string]any:
		b, err := json.Marshal(sc)
		if err != nil {
			return nil, false
		}
		raw = b
	default:
		return nil, false
	}
	var m map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(raw))
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}
