package session

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/raxol-ssh/raxol-ssh/internal/guard"
)

// sessionAPI is every method *Session had before its state was split by
// role into embedded parts (roster, share, activity, hub): callers in tui,
// mcpbridge and server reach them all on *Session, through promotion
// where a part holds them. Removing one, or a clash of two parts' names
// (an ambiguous selector), breaks this assertion at compile time.
type sessionAPI interface {
	Activity() []Action
	ActivitySeq() uint64
	Agents() []Attachment
	Attach(kind, name string) (id string, detach func())
	Attached() []Attachment
	Attention() Attention
	CanApprove() bool
	CheckToken(tok string) bool
	Commit(ctx context.Context) error
	Context() context.Context
	Control() Control
	Durable() error
	Guard() guard.Scope
	Join(kind, name string) *Presence
	LastAgentAction() (Action, uint64, bool)
	LastInput() time.Time
	NoteAction(id string)
	OnPresenceChange(f func())
	Pending() []Pending
	Recent() []string
	Record(a Action)
	RequestApproval(ctx context.Context, req ApprovalRequest) (Approval, error)
	RequestJoin(ctx context.Context, req JoinRequest) (JoinAnswer, error)
	RotateToken() (string, error)
	Save() Saved
	Screen() (text string, version uint64, ok bool)
	SendKeys(agent string, keys []string) error
	SetApprovalSink(f ApprovalSink)
	SetAttention(a Attention)
	SetCommitter(commit func(ctx context.Context, version uint64) error)
	SetControl(c Control) error
	SetJoinSink(f JoinSink)
	SetKeySink(k KeySink)
	SetSaver(save func() error)
	SetScreen(text string, version uint64)
	Show(text string, version uint64, a Attention)
	Token() string
	TokenHash() [sha256.Size]byte
	Touch()
	Watch() (<-chan struct{}, func())
	WatchFunc(notify func()) (<-chan struct{}, func())
	WatchPresence() (<-chan struct{}, func())
	WatchPresenceFunc(notify func()) (<-chan struct{}, func())
}

var _ sessionAPI = (*Session)(nil)
