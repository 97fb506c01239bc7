package tui

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/vt"

	"github.com/raxol-ssh/raxol-ssh/dispatcher"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// TestAgentActionsShareTheirTimers: an agent acting over and over (a
// closed loop of calls) starts one highlight timer and one notice timer,
// not two per action; each ends what it is for only once its time is up
// after the last action, and waits for the rest when an action moved
// that end. A refused action after an allowed one does not keep the
// highlight forever.
func TestAgentActionsShareTheirTimers(t *testing.T) {
	m, s := newTerm(t)
	act := func(outcome string) {
		s.Record(session.Action{Origin: "agent:a", Agent: true, Widget: "name", Action: "type_into", Summary: "typed into Name", Outcome: outcome})
	}
	act("ok")
	if m.agentActivity() == nil || !m.highlightTimer.pending || !m.noticeTimer.pending {
		t.Fatalf("the first action started no timers (highlight %v, notice %v)", m.highlightTimer.pending, m.noticeTimer.pending)
	}
	if m.highlight != "name" {
		t.Fatalf("highlight %q, want the widget acted on", m.highlight)
	}
	first := m.highlightUntil
	for i := range 200 {
		time.Sleep(time.Millisecond / 4) // the clock moves between actions: each would move the deadlines
		act([]string{"ok", "paused"}[i%2])
		if cmd := m.agentActivity(); cmd != nil {
			t.Fatalf("action %d started a timer while one of each was pending", i+2)
		}
	}
	if !m.highlightUntil.After(first) {
		t.Fatal("later actions did not move the highlight's end")
	}

	// A tick due at the first end arrives: the highlight and the notice
	// stay, and each waits for its new end with one tick.
	m.Update(highlightDoneMsg{m.highlightTimer.gen})
	m.Update(noticeDoneMsg{m.noticeTimer.gen})
	if m.highlight != "name" || !m.highlightTimer.pending {
		t.Fatalf("an early tick ended the highlight (%q) or left no tick for its end (%v)", m.highlight, m.highlightTimer.pending)
	}
	if m.agentNotice() == "" || !m.noticeTimer.pending {
		t.Fatalf("an early tick ended the notice or left no tick for its end (%v)", m.noticeTimer.pending)
	}
	// The re-armed tick waits for the rest, not a whole period.
	m.highlightTimer.pending, m.highlightUntil = false, time.Now().Add(30*time.Millisecond)
	start := time.Now()
	if _, ok := m.highlightTick()().(highlightDoneMsg); !ok {
		t.Fatal("the highlight tick delivers no highlightDoneMsg")
	}
	if d := time.Since(start); d < 25*time.Millisecond || d > time.Second/2 {
		t.Fatalf("the tick for an end 30ms away came after %v", d)
	}

	// Their times are up: the tick ends each, and nothing is pending.
	m.highlightUntil = time.Now().Add(-time.Millisecond)
	m.Update(highlightDoneMsg{m.highlightTimer.gen})
	if m.highlight != "" || m.highlightTimer.pending {
		t.Fatalf("after its time the highlight is %q (ticking %v), want gone", m.highlight, m.highlightTimer.pending)
	}
	m.lastAgent.At = time.Now().Add(-AgentNoticeFor - time.Second)
	m.Update(noticeDoneMsg{m.noticeTimer.gen})
	if m.agentNotice() != "" || m.noticeTimer.pending {
		t.Fatalf("after its time the notice is %q (ticking %v), want gone", m.agentNotice(), m.noticeTimer.pending)
	}

	// The next action starts one of each again.
	act("ok")
	if m.agentActivity() == nil || !m.highlightTimer.pending || !m.noticeTimer.pending {
		t.Fatal("an action after the timers ended started none")
	}
}

// TestAFrameForPresenceDrawnMeanwhileIsNotComposed: an agent's presence
// change schedules a frame for the end of the frame interval; when the
// snapshot of its call is drawn before that (the usual order), the
// scheduled frame finds nothing new and composes nothing. A presence
// change with nothing drawn after it, and a snapshot deferred by the
// frame interval, are still drawn when the frame comes.
func TestAFrameForPresenceDrawnMeanwhileIsNotComposed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newSession(t)
		ew := &emuWriter{em: vt.NewEmulator(80, 24)}
		m := New(s, Options{Terminal: "u", Output: ew, IdleRelease: -1})
		t.Cleanup(m.Close)
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		m.Init()
		call := func(text string) {
			if err := s.Dispatcher.Call(t.Context(), dispatcher.Origin{Kind: dispatcher.OriginAgent, Name: "a"}, ui.TextInputChanged{ID: "name", Text: text}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * FrameInterval)

		// Presence, then the call's snapshot drawn at once.
		m.Update(presenceMsg{})
		if !m.frameTimer.pending {
			t.Fatal("a presence change scheduled no frame")
		}
		call("one")
		m.Update(snapshotMsg{})
		drawn := m.lastDraw
		if !strings.Contains(ew.em.String(), "one") {
			t.Fatalf("the snapshot was not drawn at once:\n%s", ew.em.String())
		}
		time.Sleep(FrameInterval)
		m.Update(frameMsg{m.frameTimer.gen}) // the scheduled frame
		if m.lastDraw != drawn {
			t.Fatal("the scheduled frame was composed though everything it was for was drawn")
		}

		// A presence change alone is drawn when its frame comes.
		time.Sleep(2 * FrameInterval)
		m.Update(presenceMsg{})
		time.Sleep(FrameInterval)
		m.Update(frameMsg{m.frameTimer.gen}) // the scheduled frame
		if m.lastDraw == drawn {
			t.Fatal("a presence change with nothing drawn after it was not drawn")
		}

		// A snapshot within the frame interval of the last frame waits for
		// the frame, which draws it.
		call("two")
		m.Update(snapshotMsg{})
		if strings.Contains(ew.em.String(), "two") {
			t.Fatal("a snapshot right after a frame was drawn at once")
		}
		time.Sleep(FrameInterval)
		m.Update(frameMsg{m.frameTimer.gen}) // the scheduled frame
		if !strings.Contains(ew.em.String(), "two") {
			t.Fatalf("the deferred snapshot was not drawn by its frame:\n%s", ew.em.String())
		}
	})
}
