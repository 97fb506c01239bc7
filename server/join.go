package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	bm "charm.land/wish/v2/bubbletea"

	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/tui"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// What a join or resume that cannot go ahead is told (errNoSuchSession):
// the same line for an unknown, ended or someone else's session and for a
// refused request, so that it never says whether the id exists.
const noSuchSession = "no such session, or you may not join it"

// tooManyJoins is the answer over the join rate limit.
const tooManyJoins = "too many join requests; try again later"

// Join requests by anyone but the session's owner (unknown ids included)
// are limited per key, or per user and address without a key.
const (
	joinRequestsPerWindow = 5
	joinWindow            = time.Minute
	joinLimiterMaxKeys    = 4096
)

// attachCmd runs `join <id> [code]` and `resume <id>`. The owner's own
// key attaches at once with either; anyone else's join asks the owner (or,
// for a session no owner terminal can answer for, takes its one-time join
// code), and anyone else's resume gets the unknown-session line.
func (s *Server) attachCmd(c *conn, verb, id, code string) {
	ls, ok := s.life.get(id)
	if !ok && s.sshOthers.bridgeAttach(c, verb, id, code) { // held by another node
		return
	}
	if ok && c.isOwnerOf(ls.se) {
		s.runTerminal(c, ls, tui.RoleOwner)
		return
	}
	if !s.life.joins.allow(c.limitKey(), time.Now()) {
		c.end(errTooManyJoins)
		s.log.Info("join request over the rate limit", "user", c.user, "key", c.fp, "remote", c.remote)
		return
	}
	if !ok || verb != "join" {
		c.end(errNoSuchSession)
		return
	}
	role, ok := s.askToJoin(c, ls, code)
	if !ok {
		if s.isDraining() {
			c.end(errStopping)
		}
		c.end(errNoSuchSession)
		return
	}
	s.runTerminal(c, ls, role)
}

// askToJoin asks the session's owner whether the client may join, and
// waits for the answer, the join timeout, or the client leaving (which
// withdraws the prompt). A session no owner terminal can answer for that
// was not started by an SSH login (headless) admits the client as its
// owner-driver with its one-time join code, given or typed.
func (s *Server) askToJoin(c *conn, ls *liveSession, code string) (tui.Role, bool) {
	timeout := s.opts.SSH.JoinTimeout
	ctx, cancel := context.WithTimeout(c.ctx, timeout)
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-c.inputDone: // the requester left
		case <-s.life.drained:
		case <-ctx.Done():
		}
		cancel()
	})
	defer wg.Wait()
	defer cancel()

	if s.life.hasPrimary(ls) {
		fmt.Fprintf(c.sess.Stderr(), "raxol-ssh: asking the session's owner to let you in (waiting up to %s)\n", humanDuration(timeout))
	}
	req := session.JoinRequest{ID: randomID(), User: c.user, KeyFingerprint: c.fp, RemoteAddr: c.remote, Deadline: time.Now().Add(timeout)}
	ans, err := ls.se.RequestJoin(ctx, req)
	if errors.Is(err, session.ErrNoTerminal) && !ls.sshOwned {
		if code == "" {
			var ok bool
			if code, ok = c.readLine(ctx, "raxol-ssh: join code: "); !ok {
				return 0, false
			}
		}
		if s.claimJoinCode(ls.se.ID, code) {
			s.log.Info("join by code", "session", ls.se.ID, "user", c.user, "key", c.fp, "remote", c.remote)
			return tui.RoleOwner, true
		}
		s.log.Info("join code refused", "session", ls.se.ID, "user", c.user, "key", c.fp, "remote", c.remote)
		return 0, false
	}
	s.log.Info("join request answered", "session", ls.se.ID, "user", c.user, "key", c.fp, "remote", c.remote, "answer", joinAnswerString(ans), "err", err)
	switch ans {
	case session.JoinAsObserver:
		return tui.RoleObserver, true
	case session.JoinAsDriver:
		return tui.RoleDriver, true
	}
	return 0, false
}

func joinAnswerString(a session.JoinAnswer) string {
	switch a {
	case session.JoinAsObserver:
		return "observer"
	case session.JoinAsDriver:
		return "driver"
	}
	return "refused"
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// rateWindow allows n events per key in any window of length per.
type rateWindow struct {
	n   int
	per time.Duration
	max int // keys remembered; beyond it, idle keys are forgotten

	mu   sync.Mutex
	hits map[string][]time.Time
}

func newRateWindow(n int, per time.Duration, maxKeys int) *rateWindow {
	return &rateWindow{n: n, per: per, max: maxKeys, hits: make(map[string][]time.Time)}
}

func (r *rateWindow) allow(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	cut := now.Add(-r.per)
	h := r.hits[key]
	i := 0
	for i < len(h) && !h[i].After(cut) {
		i++
	}
	h = h[i:]
	if len(h) >= r.n {
		r.hits[key] = h
		return false
	}
	r.hits[key] = append(h, now)
	if len(r.hits) > r.max {
		for k, v := range r.hits {
			if !v[len(v)-1].After(cut) {
				delete(r.hits, k)
			}
		}
		if len(r.hits) > r.max {
			// Still full of active keys: start over rather than grow
			// without bound (a flood from that many keys is the
			// connection limits' business).
			r.hits = map[string][]time.Time{key: r.hits[key]}
		}
	}
	return true
}

// pick shows the owner's detached sessions before a new one starts. It
// returns the id to resume, "" for a new session, or ok false when the
// client quit or left.
func (s *Server) pick(c *conn, list []pickerItem) (id string, ok bool) {
	m := &pickerModel{items: list, now: time.Now}
	w, h := c.size()
	popts := append(bm.MakeOptions(c.sess),
		tea.WithInput(nil), // input comes decoded from the pump: inputTo
		tea.WithOutput(s.metrics.CountingWriter(c.sess)),
		tea.WithWindowSize(w, h),
		tea.WithoutSignalHandler(),
	)
	p := tea.NewProgram(m, popts...)
	stopInput := c.inputTo(p)
	untrack, tracked := s.track(p)
	if !tracked {
		p.Kill() // never run: ends a Send the input may be waiting in
		stopInput()
		c.end(errStopping)
		return "", false
	}
	err := c.run(p, stopInput)
	untrack()
	if err != nil && !c.gone() {
		s.log.Warn("session picker failed", "err", err)
	}
	// Run has returned: the program's goroutine is done with m.
	switch {
	case m.choice != "":
		return m.choice, true
	case m.fresh:
		return "", true
	}
	return "", false
}

// pickerModel lists detached sessions: enter resumes the highlighted one,
// n starts a new session, ctrl+c or q leaves.
type pickerModel struct {
	items  []pickerItem
	now    func() time.Time
	cur    int
	width  int
	choice string
	fresh  bool
}

func (m *pickerModel) Init() tea.Cmd { return nil }

func (m *pickerModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width = msg.Width
	case tea.KeyPressMsg:
		switch msg.String() {
		case "up", "k", "shift+tab":
			m.cur = (m.cur + len(m.items) - 1) % len(m.items)
		case "down", "j", "tab":
			m.cur = (m.cur + 1) % len(m.items)
		case "enter":
			m.choice = m.items[m.cur].ID
			return m, tea.Quit
		case "n":
			m.fresh = true
			return m, tea.Quit
		case "ctrl+c", "q", "esc":
			return m, tea.Quit
		}
	}
	return m, nil
}

func (m *pickerModel) View() tea.View {
	width := m.width
	if width <= 0 {
		width = 80
	}
	var b strings.Builder
	b.WriteString("raxol-ssh · detached sessions\n\n")
	b.WriteString("Your connection to these sessions dropped; they are still running.\n\n")
	for i, it := range m.items {
		mark := "  "
		if i == m.cur {
			mark = "> "
		}
		agents := "agents: none"
		if it.Agents > 0 {
			agents = fmt.Sprintf("agents: %d", it.Agents)
		}
		ago := m.now().Sub(it.Since).Round(time.Second)
		b.WriteString(ui.Truncate(fmt.Sprintf("%ssession %s · detached %s ago · %s", mark, it.ID, ago, agents), width))
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(ui.Truncate("↑/↓ choose · enter resume · n new session · ctrl+c quit", width))
	v := tea.NewView(b.String())
	v.AltScreen = true
	return v
}

// humanDuration writes a timeout as people say it: "60s", "5m", "1h30m".
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute || d%time.Minute != 0:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	case d > time.Hour:
		return fmt.Sprintf("%dh%dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	default:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	}
}

// joinCommand is what a human runs to join session id.
func (s *Server) joinCommand(id string) string {
	addr := s.SSHAddr()
	if addr == "" {
		addr = s.opts.SSH.Addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		host, port = addr, "22"
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
		if u, err := url.Parse(s.opts.MCP.PublicURL); err == nil && u.Hostname() != "" {
			host = u.Hostname()
		}
	}
	return fmt.Sprintf("ssh -p %s %s -t join %s", port, host, id)
}
