package mcpbridge

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// listable reports whether a tool is listed to this caller: allowed, or
// "ask" while a human who can approve is attached. A policy that panics on
// a tool costs that tool its listing only.
func (c *sessionServer) listable(req mcp.Request, name string, actx authz.Context) bool {
	if sensitive, known := c.classify(c.parseTool(name)); !known || (sensitive && !c.b.opts.Policy.ToolConfigured()) {
		return false
	}
	if name == ToolScreenshot || name == ToolWaitFor {
		// It would be refused if the read policy hides the screen.
		if d, panicked := c.b.opts.Policy.DecideRead("resources/read", map[string]any{"uri": URIScreen}, actx); panicked || d.Kind != authz.KindAllow {
			return false
		}
	}
	d, panicked := c.b.opts.Policy.DecideTool(name, nil, actx)
	switch {
	case panicked:
		return false
	case d.Kind == authz.KindAllow:
		return true
	case d.Kind == authz.KindAsk:
		return c.sess.CanApprove() || c.granted(req, name)
	}
	return false
}

// classify reports whether a tool is sensitive (annotated sensitive or
// destructive), and whether it could be classified at all.
func (c *sessionServer) classify(t toolName) (sensitive, known bool) {
	switch t.name {
	case ToolSendKey:
		return true, true
	case ToolScreenshot, ToolWaitFor, ToolDiscover, ToolShow:
		return false, true
	}
	_, spec, err := c.resolveNow(t)
	if err != nil {
		return false, false
	}
	return spec.Annotations["sensitive"] == true || spec.Annotations["destructiveHint"] == true, true
}

// authorizeCall applies the tool seam to a call; nil lets it run.
func (c *sessionServer) authorizeCall(ctx context.Context, r *mcp.CallToolRequest, actx authz.Context) *mcp.CallToolResult {
	t := c.toolOf(ctx, r)
	name := t.name
	args, _ := argsOf(ctx, r)
	sensitive, known := c.classify(t)
	if !known {
		// Nothing runs without being classified: refuse, saying why the
		// tool is not there.
		return c.unavailable(t)
	}
	if refused := c.control(t); refused != nil {
		return refused
	}
	if sensitive && !c.b.opts.Policy.ToolConfigured() {
		c.b.opts.Metrics.Authz("tool", "deny")
		return DenialResult(name, authz.Deny("sensitive_tool_unguarded: a sensitive tool never runs without an authorizer"))
	}
	d, panicked := c.b.opts.Policy.DecideTool(name, args, actx)
	if panicked {
		c.b.opts.Metrics.Authz("tool", "error")
		return DenialResult(name, d)
	}
	switch d.Kind {
	case authz.KindAllow:
		c.b.opts.Metrics.Authz("tool", "allow")
		return nil
	case authz.KindAsk:
		if c.granted(r, name) {
			c.b.opts.Metrics.Authz("tool", "approved")
			return nil
		}
		if !c.sess.CanApprove() {
			c.b.opts.Metrics.Authz("tool", "ask")
			return DenialResult(name, d)
		}
		return c.ask(ctx, r, t, args, d)
	default:
		c.b.opts.Metrics.Authz("tool", "deny")
		return DenialResult(name, d)
	}
}

// control refuses writes the human does not let agents make now: none
// while paused, and none beside the focused widget in focus-only mode.
func (c *sessionServer) control(t toolName) *mcp.CallToolResult {
	ctl := c.sess.Control()
	if !ctl.Paused && !ctl.FocusOnly {
		return nil
	}
	id, derived := t.widgetID, t.derived
	write := (derived && !c.isReadAction(t)) || t.name == ToolSendKey
	switch {
	case !write:
		return nil
	case ctl.Paused:
		return errorResult(ErrKindPaused, "paused by the human: agents may read but not act until the human hands control back")
	case derived && id != c.sess.Attention().Focus:
		return errorResult(ErrKindNotFocused, fmt.Sprintf("the human lets agents act only on the focused widget (%q) now", c.sess.Attention().Focus))
	}
	return nil
}

// ask puts the call to the human in their terminal and waits for the
// answer, sending progress notifications meanwhile so that clients that
// reset their timeout on progress keep waiting.
func (c *sessionServer) ask(ctx context.Context, r *mcp.CallToolRequest, t toolName, args map[string]any, d authz.Decision) *mcp.CallToolResult {
	name := t.name
	req := session.ApprovalRequest{
		ID:       randomID(),
		Agent:    clientName(r.Session),
		Tool:     name,
		Widget:   c.widgetLabel(t),
		Args:     c.maskedArgs(t, args),
		Prompt:   d.Prompt,
		Deadline: time.Now().Add(c.b.opts.ApprovalTimeout),
	}
	// The prompt lives as long as someone waits for its answer: the call
	// (notifications/cancelled), its HTTP request or stream, its client.
	gctx, stopGone := c.withdrawOnGone(ctx, r)
	defer stopGone()
	wctx, cancel := context.WithTimeout(gctx, c.b.opts.ApprovalTimeout)
	defer cancel()
	stop := c.progress(wctx, r)
	answer, err := c.sess.RequestApproval(wctx, req)
	stop()
	if gctx.Err() != nil {
		// Gone before (or while) the human answered: an answer to a
		// withdrawn prompt grants nothing.
		c.b.opts.Metrics.Authz("tool", "withdrawn")
		return DenialResult(name, authz.Deny("withdrawn: the request went away before the human answered"))
	}
	switch answer {
	case session.ApprovedForSession:
		c.grant(r, name)
		fallthrough
	case session.ApprovedOnce:
		c.b.opts.Metrics.Authz("tool", "approved")
		return nil
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		c.b.opts.Metrics.Authz("tool", "timeout")
		return DenialResult(name, authz.Deny(fmt.Sprintf("no answer from the human within %s", c.b.opts.ApprovalTimeout)))
	case errors.Is(err, session.ErrNoTerminal):
		c.b.opts.Metrics.Authz("tool", "ask")
		return DenialResult(name, d)
	default:
		c.b.opts.Metrics.Authz("tool", "refused")
		return DenialResult(name, authz.Deny("refused by the human"))
	}
}

// progress sends notifications/progress every few seconds while a call
// waits, if the client asked for progress; the returned func stops it.
func (c *sessionServer) progress(ctx context.Context, r *mcp.CallToolRequest) func() {
	token := r.Params.GetProgressToken()
	if token == nil || r.Session == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(c.b.opts.ProgressInterval)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				_ = r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: float64(n), Message: "waiting for the human to approve",
				})
			}
		}
	}()
	return func() { close(done); <-finished }
}

// widgetLabel is the label, title or id of the widget a tool acts on.
func (c *sessionServer) widgetLabel(t toolName) string {
	id := t.widgetID
	if !t.derived {
		return ""
	}
	snap := c.sess.Dispatcher.Snapshot()
	w, ok := c.scannedAt(snap).find(snap.Tree, id)
	if !ok {
		return id
	}
	return cleanLabel(ui.Label(w), id)
}

// cleanLabel is a widget's label as the activity log shows it: cleaned,
// or its id when nothing is left.
func cleanLabel(label, id string) string {
	if l := Clean(label); strings.TrimSpace(l) != "" {
		return l
	}
	return id
}

// maskedArgs renders arguments for the human, hiding a password field's
// text.
func (c *sessionServer) maskedArgs(t toolName, args map[string]any) string {
	if id, ok := t.widgetID, t.derived; ok {
		if w, ok := ui.Find(c.sess.Dispatcher.Snapshot().Tree, id); ok {
			_, secret := w.(ui.PasswordField)
			if sw, ok := w.(ui.Secret); ok && sw.HoldsSecret() {
				secret = true
			}
			if secret {
				masked := map[string]any{}
				for k := range args {
					masked[k] = "••••••"
				}
				args = masked
			}
		}
	}
	b, err := json.Marshal(args)
	if err != nil {
		return "(unprintable)"
	}
	return Clean(string(b))
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
