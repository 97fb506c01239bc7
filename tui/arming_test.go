package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/raxol-ssh/raxol-ssh/session"
)

// A prompt that appears while the human is typing does not take the next
// letters as its answer: answer keys are swallowed (they reach neither the
// prompt nor the app) until it has been on top for the arming delay, and
// the next prompt to come on top arms again.
func TestPromptArming(t *testing.T) {
	m, s := newPrimary(t)
	now := time.Unix(1_000_000, 0)
	m.opts.Now = func() time.Time { return now }
	if m.opts.PromptArming != DefaultPromptArming || DefaultPromptArming != 700*time.Millisecond {
		t.Fatalf("arming %v, default %v", m.opts.PromptArming, DefaultPromptArming)
	}
	answered := func(c chan session.Approval) (session.Approval, bool) {
		select {
		case a := <-c:
			return a, true
		default:
			return 0, false
		}
	}
	ask := func(id string) chan session.Approval {
		reply := make(chan session.Approval, 1)
		m.Update(ApprovalMsg{Req: session.ApprovalRequest{ID: id, Agent: "bot", Tool: "test.open.click"}, Reply: reply})
		return reply
	}

	// The human is typing into the name input when the prompt appears.
	m.Update(key("h"))
	first, second := ask("r1"), ask("r2")
	if scr := screenText(m); !strings.Contains(scr, "wants to run") || !strings.Contains(scr, ArmingNote+"0.7s") {
		t.Fatalf("the prompt does not say its keys are not active yet:\n%s", scr)
	}
	for _, k := range []string{"s", "a", "y", "i", "d", "esc"} {
		now = now.Add(100 * time.Millisecond)
		m.Update(key(k))
		if a, ok := answered(first); ok {
			t.Fatalf("%q typed %v after the prompt appeared answered it: %v", k, now.Sub(time.Unix(1_000_000, 0)), a)
		}
	}
	if got := model(s).name; got != "h" {
		t.Fatalf("keys swallowed by the arming prompt reached the app: %q", got)
	}
	if scr := screenText(m); !strings.Contains(scr, ArmingNote+"0.1s") {
		t.Fatalf("the note does not count down:\n%s", scr)
	}
	// Armed: the note goes and the next key answers.
	now = now.Add(100 * time.Millisecond)
	m.Update(armedMsg{m.armTimer.gen}) // the scheduled tick
	if scr := screenText(m); strings.Contains(scr, ArmingNote) {
		t.Fatalf("the armed prompt still says its keys are not active:\n%s", scr)
	}
	m.Update(key("s"))
	if a, ok := answered(first); !ok || a != session.ApprovedForSession {
		t.Fatalf("armed prompt: answered %v %v", a, ok)
	}
	// The queued prompt is on top now: it arms afresh.
	if !strings.Contains(screenText(m), ArmingNote+"0.7s") {
		t.Fatalf("the next prompt did not re-arm:\n%s", screenText(m))
	}
	m.Update(key("a"))
	if a, ok := answered(second); ok {
		t.Fatalf("the next prompt took a key at once: %v", a)
	}
	now = now.Add(699 * time.Millisecond)
	m.Update(key("a"))
	if a, ok := answered(second); ok {
		t.Fatalf("the next prompt took a key 699ms in: %v", a)
	}
	now = now.Add(time.Millisecond)
	m.Update(key("d"))
	if a, ok := answered(second); !ok || a != session.Refused {
		t.Fatalf("the next prompt, armed: %v %v", a, ok)
	}

	// Join prompts arm the same way: "r" typed at once does not admit a
	// driver, ctrl+c still leaves.
	join := make(chan session.JoinAnswer, 1)
	m.Update(JoinMsg{Req: session.JoinRequest{ID: "j", User: "stranger", RemoteAddr: "10.0.0.9:5555"}, Reply: join})
	m.Update(key("r"))
	m.Update(key("o"))
	select {
	case a := <-join:
		t.Fatalf("a key typed as the join prompt appeared answered it: %v", a)
	default:
	}
	if _, cmd := m.Update(key("ctrl+c")); cmd == nil {
		t.Fatal("ctrl+c does not leave while a prompt arms")
	}
	now = now.Add(DefaultPromptArming)
	m.Update(key("o"))
	if a := <-join; a != session.JoinAsObserver {
		t.Fatalf("armed join prompt answered %v", a)
	}

	// An arming tick is scheduled for the redraw, one at a time.
	m.armTimer.pending = false
	m.Update(ApprovalMsg{Req: session.ApprovalRequest{ID: "r3", Agent: "bot", Tool: "t"}, Reply: make(chan session.Approval, 1)})
	if !m.armTimer.pending {
		t.Fatal("no redraw scheduled for when the prompt arms")
	}
}
