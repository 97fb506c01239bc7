package mcpbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wI2L/jsondiff"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/internal/guard"
	"github.com/raxol-ssh/raxol-ssh/metrics"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Resource URIs every session has.
const (
	URITree     = "raxol://session/tree"
	URIScreen   = "raxol://session/screen"
	URIContext  = "raxol://session/context"
	URIActivity = "raxol://session/activity"
)

// resources serves a session's resources and pushes JSON Patch updates to
// their subscribers.
type resources struct {
	c *sessionServer

	mu sync.Mutex // protects the following; both nil until a first subscription
	// subs holds the clients subscribed to each URI, and last the
	// content they were last told about.
	subs map[string]map[*mcp.ServerSession]bool
	last map[string]*resState
}

// resState is the content subscribers were last told about.
type resState struct {
	content []byte
	version uint64
}

func newResources(c *sessionServer) *resources { return &resources{c: c} }

// StateURI is the URI of an app projection.
func StateURI(namespace, name string) string { return namespace + "://state/" + name }

// sessionResources are the resources every session has, in listing
// order: built once per process and shared by every session's server,
// read only (the SDK keeps and lists the pointers it is given).
var sessionResources = sync.OnceValue(func() []*mcp.Resource {
	return []*mcp.Resource{
		{URI: URITree, Name: "tree", Description: "The component tree of the current view as JSON, with each widget's state.", MIMEType: "application/json"},
		{URI: URIScreen, Name: "screen", Description: "The screen text as the human's terminal shows it now.", MIMEType: "text/plain"},
		{URI: URIContext, Name: "context", Description: "The session context: who is attached, what agents may do now, prompts waiting for the human (approvals, join requests), the human's focus, the advertised tools, the model projections, the widgets in the lens and recent activity with origins.", MIMEType: "application/json"},
		{URI: URIActivity, Name: "activity", Description: "The session's activity log: the last few hundred actions of humans and agents, with time, origin, widget, action and outcome.", MIMEType: "application/json"},
	}
})

// projectionResources holds the resource of each app projection, by URI:
// a projection's resource follows from its namespace and name, so every
// session of a bridge (and every bridge with the same ones) shares it,
// read only.
var projectionResources sync.Map // URI -> *mcp.Resource

func projectionResource(namespace, name string) *mcp.Resource {
	uri := StateURI(namespace, name)
	if r, ok := projectionResources.Load(uri); ok {
		return r.(*mcp.Resource)
	}
	r, _ := projectionResources.LoadOrStore(uri, &mcp.Resource{URI: uri, Name: name, Description: "App state projection, as JSON.", MIMEType: "application/json"})
	return r.(*mcp.Resource)
}

func (r *resources) register() {
	for _, res := range sessionResources() {
		r.c.server.AddResource(res, r.read)
	}
	names := make([]string, 0, len(r.c.b.opts.Projections))
	for n := range r.c.b.opts.Projections {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		r.c.server.AddResource(projectionResource(r.c.b.opts.Namespace, n), r.read)
	}
}

// content renders one resource from a snapshot, as a client with view v
// may read it (nil: whole, as subscribers share it).
func (r *resources) content(uri string, snap dispatcher.Snapshot, v *readView) ([]byte, string, error) {
	switch uri {
	case URITree:
		b, err := json.Marshal(treeJSON(r.c.sess.Guard(), snap.Tree))
		return b, "application/json", err
	case URIScreen:
		return []byte(r.c.screen()), "text/plain", nil
	case URIContext:
		ctx, err := guard.Call(r.c.sess.Guard(), metrics.HookOther, "", func() map[string]any { return r.c.contextTree(snap, v) })
		if err != nil {
			return nil, "", fmt.Errorf("context resource: %w", err)
		}
		b, err := json.Marshal(ctx)
		return b, "application/json", err
	case URIActivity:
		b, err := json.Marshal(map[string]any{"actions": orEmpty(r.c.sess.Activity())})
		return b, "application/json", err
	}
	for name, f := range r.c.b.opts.Projections {
		if uri == StateURI(r.c.b.opts.Namespace, name) {
			b, err := json.Marshal(r.c.project(name, f, snap.Model))
			return b, "application/json", err
		}
	}
	return nil, "", mcp.ResourceNotFoundError(uri)
}

// project runs the app projection name, turning a panic into an error
// value (counted, and logged once per session and projection).
func (c *sessionServer) project(name string, f func(ui.Model) any, m ui.Model) any {
	v, err := guard.Call(c.sess.Guard(), metrics.HookProjection, name, func() any { return f(m) })
	if err != nil {
		return map[string]any{"error": "projection failed"}
	}
	return v
}

func (r *resources) read(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	b, mime, err := r.content(uri, r.c.sess.Dispatcher.Snapshot(), r.c.readViewOf(req))
	if err != nil {
		return nil, err
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(b)}}}
	r.mu.Lock()
	if st, ok := r.last[uri]; ok && bytes.Equal(st.content, b) {
		res.Meta = mcp.Meta{"version": st.version}
	}
	r.mu.Unlock()
	return res, nil
}

// served reports whether uri is one of the session's resources (the App's
// page aside): the four every session has, or an app projection's.
func (r *resources) served(uri string) bool {
	switch uri {
	case URITree, URIScreen, URIContext, URIActivity:
		return true
	}
	ns := r.c.b.opts.Namespace
	if len(uri) <= len(ns) || uri[:len(ns)] != ns {
		return false
	}
	name, ok := strings.CutPrefix(uri[len(ns):], "://state/")
	if !ok {
		return false
	}
	_, ok = r.c.b.opts.Projections[name]
	return ok
}

// covers lists the reads a resource's whole content needs: its own, and
// for the context those of the parts it holds (the widgets' state, the
// activity, each model projection).
func (r *resources) covers(uri string) []string {
	if uri != URIContext {
		return []string{uri}
	}
	out := []string{URIContext, URITree, URIActivity}
	for name := range r.c.b.opts.Projections {
		out = append(out, StateURI(r.c.b.opts.Namespace, name))
	}
	return out
}

func (c *sessionServer) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	r := c.res
	uri := req.Params.URI
	if !r.served(uri) {
		return mcp.ResourceNotFoundError(uri)
	}
	// A subscription carries the content (patches of it): resources/subscribe
	// and subscriptions/listen both come here, and both need the resource
	// to be readable by this client, every part of it: its updates are
	// patches of one content shared by every subscriber.
	actx := c.clientContext(req)
	for _, u := range r.covers(uri) {
		if err := c.gate.MayRead(u, actx); err != nil {
			return err
		}
	}
	b, _, err := r.content(uri, c.sess.Dispatcher.Snapshot(), nil)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.subs == nil {
		r.subs, r.last = map[string]map[*mcp.ServerSession]bool{}, map[string]*resState{}
	}
	if r.subs[uri] == nil {
		r.subs[uri] = map[*mcp.ServerSession]bool{}
	}
	r.subs[uri][req.Session] = true // a second subscribe by the same client is the same subscription
	if _, ok := r.last[uri]; !ok {
		r.last[uri] = &resState{content: b, version: 1}
	}
	return nil
}

func (c *sessionServer) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	c.res.drop(req.Session, req.Params.URI)
	return nil
}

// forget drops every subscription of a client that has gone.
func (r *resources) forget(ss *mcp.ServerSession) {
	r.mu.Lock()
	uris := make([]string, 0, len(r.subs))
	for uri := range r.subs {
		uris = append(uris, uri)
	}
	r.mu.Unlock()
	for _, uri := range uris {
		r.drop(ss, uri)
	}
}

// drop ends one client's subscription to uri; a resource nobody is
// subscribed to is no longer diffed.
func (r *resources) drop(ss *mcp.ServerSession, uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.subs[uri], ss)
	if len(r.subs[uri]) == 0 {
		delete(r.subs, uri)
		delete(r.last, uri)
	}
}

// update sends notifications/resources/updated for every subscribed
// resource whose content changed, with _meta {version, baseVersion, patch}
// where patch is the RFC 6902 JSON Patch from the base content to the new.
func (r *resources) update(snap dispatcher.Snapshot) {
	r.mu.Lock()
	uris := make([]string, 0, len(r.subs))
	for uri := range r.subs {
		uris = append(uris, uri)
	}
	r.mu.Unlock()
	slices.Sort(uris)
	for _, uri := range uris {
		b, mime, err := r.content(uri, snap, nil)
		if err != nil {
			continue
		}
		r.mu.Lock()
		st, ok := r.last[uri]
		if !ok || bytes.Equal(st.content, b) {
			r.mu.Unlock()
			continue
		}
		patch, err := diff(st.content, b, mime)
		if err != nil {
			r.mu.Unlock()
			r.c.log.Warn("resource patch failed", "uri", uri, "err", err)
			continue
		}
		base := st.version
		st.content, st.version = b, base+1
		version := st.version
		r.mu.Unlock()
		_ = r.c.server.ResourceUpdated(r.c.ctx, &mcp.ResourceUpdatedNotificationParams{
			URI:  uri,
			Meta: mcp.Meta{"version": version, "baseVersion": base, "patch": patch},
		})
	}
}

// diff is the JSON Patch from a to b. Plain text is treated as one JSON
// string, replaced whole.
func diff(a, b []byte, mime string) (any, error) {
	if mime != "application/json" {
		return []map[string]any{{"op": "replace", "path": "", "value": string(b)}}, nil
	}
	// Rationalize: where one replace is shorter than the operations it
	// stands for, send it (a filtered table's 12 operations, 541 bytes,
	// become one of 135).
	p, err := jsondiff.CompareJSON(a, b, jsondiff.Rationalize())
	if err != nil {
		return nil, fmt.Errorf("json patch: %w", err)
	}
	if p == nil {
		p = jsondiff.Patch{}
	}
	return p, nil
}

// TreeJSON turns a component tree into plain data: each widget's State
// (with "children" when it has any), layout nodes by type. A widget whose
// State (or Children, or WidgetID) panics is {"error": "provider_failed"}.
func TreeJSON(n ui.Node) any { return treeJSON(guard.Scope{}, n) }

func treeJSON(g guard.Scope, n ui.Node) any {
	if n == nil {
		return nil
	}
	id := ""
	if w, ok := n.(ui.Widget); ok {
		id, _ = guard.Call(g, metrics.HookWidgetID, "", w.WidgetID)
	}
	v, err := guard.Call(g, metrics.HookState, id, func() any { return nodeJSON(g, n) })
	if err != nil {
		return map[string]any{"type": fmt.Sprintf("%T", n), "id": id, "error": ErrKindProviderFailed}
	}
	return v
}

// nodeJSON is one node of TreeJSON; treeJSON contains its panics.
func nodeJSON(g guard.Scope, n ui.Node) any {
	children := func(items []ui.Node) []any {
		out := make([]any, 0, len(items))
		for _, it := range items {
			if it != nil {
				out = append(out, treeJSON(g, it))
			}
		}
		return out
	}
	switch n := n.(type) {
	case ui.ToolProvider:
		st := n.State()
		kids := n.Children()
		if len(kids) == 0 {
			return st
		}
		if m, ok := st.(map[string]any); ok {
			out := make(map[string]any, len(m)+1)
			for k, v := range m {
				out[k] = v
			}
			out["children"] = children(kids)
			return out
		}
		return map[string]any{"state": st, "children": children(kids)}
	case ui.Column:
		return map[string]any{"type": "column", "children": children(n.Items)}
	case ui.Row:
		return map[string]any{"type": "row", "children": children(n.Items)}
	case ui.Box:
		return map[string]any{"type": "box", "title": n.Title, "children": children(n.Children())}
	case ui.Text:
		return map[string]any{"type": "text", "text": n.Text}
	case ui.Widget:
		return map[string]any{"type": fmt.Sprintf("%T", n), "id": n.WidgetID(), "children": children(n.Children())}
	default:
		return map[string]any{"type": fmt.Sprintf("%T", n), "children": children(n.Children())}
	}
}

// withholdUpdates is the sending middleware that drops a resource update
// for a client that may no longer read every part of it (the gate's
// Sending checks the resource itself): a context subscriber that may not
// read the tree, say, gets no patch of the widgets' state.
func (c *sessionServer) withholdUpdates(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "notifications/resources/updated" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		if !ok || p == nil {
			return nil, nil
		}
		v := c.readViewOf(req)
		for _, u := range c.res.covers(p.URI) {
			if u != p.URI && !v.may(u) {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// orEmpty is s, or an empty slice for nil: every list in an answer is
// [] when it is empty, never null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// contextTree assembles the context resource as a client with view v may
// read it (nil: whole): the parts that are other resources' content (see
// readpolicy.go) only when v may read those, each part left out named in
// "withheld".
func (c *sessionServer) contextTree(snap dispatcher.Snapshot, v *readView) map[string]any {
	c.mu.Lock()
	advertised := slices.Clone(c.advertised)
	synced := c.synced
	c.mu.Unlock()
	withheld := map[string]any{}
	act := c.sess.Activity()
	if len(act) > 20 {
		act = act[len(act)-20:]
	}
	inLens := map[string]bool{}
	for _, n := range advertised {
		if id, _, ok := SplitName(c.b.opts.Namespace, n); ok {
			inLens[id] = true
		}
	}
	if !v.may(readToolsList) {
		advertised = nil
		withheld["lens.advertised"] = withheldBecause(readToolsList)
	}
	advertised = orEmpty(advertised)
	widgets := []any{}
	if v.may(URITree) {
		ui.Walk(snap.Tree, func(n ui.Node) bool {
			if tp, ok := n.(ui.ToolProvider); ok && inLens[tp.WidgetID()] {
				widgets = append(widgets, tp.State())
			}
			return true
		})
	} else {
		withheld["widgets"] = withheldBecause(URITree)
	}
	recent := orEmpty(c.sess.Recent())
	if !v.may(URIActivity) {
		act, recent = nil, []string{}
		withheld["activity"] = withheldBecause(URIActivity)
		withheld["recent"] = withheldBecause(URIActivity)
	}
	attached := []map[string]any{}
	for _, a := range c.sess.Attached() {
		e := map[string]any{"kind": a.Kind, "name": a.Name, "since": a.Since.UTC().Format(time.RFC3339)}
		if a.Kind == session.KindAgent {
			// When it last made a request, and whether that was long ago.
			e["last_active"] = a.LastActive.UTC().Format(time.RFC3339)
			e["idle"] = a.Idle
		}
		attached = append(attached, e)
	}
	model := map[string]any{}
	for name, f := range c.b.opts.Projections {
		if u := StateURI(c.b.opts.Namespace, name); !v.may(u) {
			withheld["model."+name] = withheldBecause(u)
			continue
		}
		model[name] = c.project(name, f, snap.Model)
	}
	att := c.sess.Attention()
	// The seed's "pending notifications": prompts waiting for the human.
	pending := map[string]any{"approvals": []any{}, "joins": []any{}}
	for _, p := range c.sess.Pending() {
		since := p.Since.UTC().Format("2006-01-02T15:04:05Z07:00")
		switch p.Kind {
		case session.PendingApproval:
			pending["approvals"] = append(pending["approvals"].([]any), map[string]any{"id": p.ID, "tool": p.Tool, "agent": p.Agent, "since": since})
		case session.PendingJoin:
			pending["joins"] = append(pending["joins"].([]any), map[string]any{"id": p.ID, "user": p.User, "since": since})
		}
	}
	out := map[string]any{
		"pending":   pending,
		"session":   map[string]any{"id": c.sess.ID, "app": c.sess.App, "created": c.sess.Created.UTC().Format("2006-01-02T15:04:05Z07:00"), "version": snap.Version},
		"attached":  attached,
		"attention": map[string]any{"focus": att.Focus, "hover": att.Hover},
		"control":   c.sess.Control(),
		// version: the snapshot the advertised tools were derived from.
		"lens":     map[string]any{"mode": string(c.b.opts.LensMode), "max_tools": c.b.opts.MaxTools, "advertised": advertised, "version": synced},
		"model":    model,
		"widgets":  widgets,
		"recent":   recent,
		"activity": orEmpty(act),
	}
	if len(withheld) > 0 {
		out["withheld"] = withheld
	}
	return out
}
