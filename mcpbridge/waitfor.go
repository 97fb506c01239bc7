package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/raxol-ssh/raxol-ssh/authz"
)

// raxol_wait_for: the server waits for the screen instead of the agent
// polling raxol_screenshot. A wait wakes on every change that can change
// the screen (a snapshot of the model, a frame a terminal drew), checks
// the screen then, and once in a while (waitFallback) besides; it ends
// when the screen matches, when its timeout passes (a result, not an
// error), or when nobody waits for the answer any more.
const (
	waitDefault    = 5 * time.Second
	waitMax        = 30 * time.Second
	waitFallback   = time.Second // a re-check with no change seen
	maxWaitPattern = 1024        // bytes of text or regex
	// maxWaitsPerClient bounds a client's waits at once: each holds a
	// goroutine of the SDK's and a subscription to the session.
	maxWaitsPerClient = 4
)

// waitCancelled is the error kind of a wait that ended because the
// request was cancelled or its client went away: nobody reads it, but
// the call's metrics and activity see an outcome that says so.
const waitCancelled = "cancelled"

// errWaitEnded: the session's dispatcher stopped, or its MCP server
// closed, during a wait.
var errWaitEnded = errors.New("the session ended")

// waitSpec is what a raxol_wait_for call waits for.
type waitSpec struct {
	text    string         // when re is nil
	re      *regexp.Regexp // compiled once per call
	timeout time.Duration
}

func (w waitSpec) match(screen string) bool {
	if w.re != nil {
		return w.re.MatchString(screen)
	}
	return strings.Contains(screen, w.text)
}

// waitArgs checks raxol_wait_for's arguments.
func waitArgs(args map[string]any) (waitSpec, error) {
	w := waitSpec{timeout: waitDefault}
	for k := range args {
		if k != "text" && k != "regex" && k != "timeout_ms" {
			return w, fmt.Errorf("unknown argument %q: give text or regex, and timeout_ms", k)
		}
	}
	text, hasText := args["text"]
	regex, hasRegex := args["regex"]
	if hasText == hasRegex {
		return w, errors.New("give exactly one of text (a string the screen must contain) and regex (a Go RE2 expression it must match)")
	}
	pattern, what := text, "text"
	if hasRegex {
		pattern, what = regex, "regex"
	}
	s, ok := pattern.(string)
	switch {
	case !ok:
		return w, fmt.Errorf("%s must be a string", what)
	case s == "":
		return w, fmt.Errorf("%s must not be empty", what)
	case len(s) > maxWaitPattern:
		return w, fmt.Errorf("%s is %d bytes long; at most %d", what, len(s), maxWaitPattern)
	case !utf8.ValidString(s):
		return w, fmt.Errorf("%s must be valid UTF-8", what)
	}
	if hasRegex {
		re, err := regexp.Compile(s)
		if err != nil {
			return w, fmt.Errorf("regex does not compile (Go RE2 syntax): %w", err)
		}
		w.re = re
	} else {
		w.text = s
	}
	if v, ok := args["timeout_ms"]; ok {
		ms, isNum := v.(float64)
		if !isNum || ms != math.Trunc(ms) || ms < 0 || ms > float64(waitMax.Milliseconds()) {
			return w, fmt.Errorf("timeout_ms must be a whole number of milliseconds from 0 to %d", waitMax.Milliseconds())
		}
		w.timeout = time.Duration(ms) * time.Millisecond
	}
	return w, nil
}

// waitFor serves raxol_wait_for. It reads the screen, so the read
// policy must let the client read it, exactly as for raxol_screenshot.
func (c *sessionServer) waitFor(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if err := c.gate.MayRead(URIScreen, c.clientContext(req)); err != nil {
		return DenialResult(ToolWaitFor, authz.Deny("the read policy does not allow reading "+URIScreen)), nil
	}
	args, err := argsOf(ctx, req)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	w, err := waitArgs(args)
	if err != nil {
		return errorResult(ErrKindInvalidArgs, err.Error()), nil
	}
	release, ok := c.waits.take(req.Session)
	if !ok {
		return errorResult(ErrKindRateLimited, fmt.Sprintf("this client has %d raxol_wait_for calls waiting already, the most at once; "+
			"wait for one to answer first", maxWaitsPerClient)), nil
	}
	defer release()
	// The wait lasts as long as someone waits for its answer: the call
	// (notifications/cancelled), its HTTP request or stream, its client,
	// the session's MCP server.
	wctx, stop := c.withdrawOnGone(ctx, req)
	defer stop()
	start := time.Now()
	screen, matched, err := c.waitScreen(wctx, w)
	waited := time.Since(start).Milliseconds()
	switch {
	case errors.Is(err, errWaitEnded) || (err != nil && c.ctx.Err() != nil):
		return errorResult(ErrKindSessionEnded, "the session has ended"), nil
	case err != nil:
		return errorResult(waitCancelled, "the wait was withdrawn: the request was cancelled or its client went away"), nil
	}
	return jsonResult(map[string]any{"matched": matched, "screen": screen, "waited_ms": waited}), nil
}

// waitScreen checks the screen (screenNow: what raxol_screenshot shows)
// until it matches w or w's timeout passes; it checks once more at the
// deadline. It wakes on every new snapshot of the model and every change
// the session signals (a terminal's new frame among them), and every
// waitFallback besides; it starts no goroutine. err is ctx's cause when
// ctx ends first, errWaitEnded when the session's dispatcher stops.
func (c *sessionServer) waitScreen(ctx context.Context, w waitSpec) (screen string, matched bool, err error) {
	// Subscribed before the first look, so no change after it is missed.
	sub := c.sess.Dispatcher.Subscribe()
	defer sub.Close()
	changed, stopWatch := c.sess.Watch()
	defer stopWatch()
	deadline := time.NewTimer(w.timeout)
	defer deadline.Stop()
	fallback := time.NewTicker(waitFallback)
	defer fallback.Stop()
	for {
		screen = c.screenNow()
		if w.match(screen) {
			return screen, true, nil
		}
		select {
		case <-ctx.Done():
			return screen, false, context.Cause(ctx)
		case <-sub.Done():
			return screen, false, errWaitEnded
		case <-deadline.C:
			screen = c.screenNow()
			return screen, w.match(screen), nil
		case <-sub.C():
		case <-changed:
		case <-fallback.C:
		}
	}
}

// waitSlots counts each client's raxol_wait_for calls in progress, to
// hold them to maxWaitsPerClient. The zero value is ready to use.
type waitSlots struct {
	mu sync.Mutex
	n  map[*mcp.ServerSession]int // a client's entry goes when its count is 0
}

// take claims one of ss's slots; ok is false when all are taken. release
// gives it back (once).
func (s *waitSlots) take(ss *mcp.ServerSession) (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[ss] >= maxWaitsPerClient {
		return nil, false
	}
	if s.n == nil {
		s.n = map[*mcp.ServerSession]int{}
	}
	s.n[ss]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.n[ss]--; s.n[ss] <= 0 {
				delete(s.n, ss)
			}
		})
	}, true
}
