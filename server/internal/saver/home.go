package saver

import "context"

// Home is what the saver asks about a session's home (the cluster node
// in a cluster; Standalone on a single node): whether this node may
// write it now (Fenced: nil, or why not), to give up a session another
// node took (GiveUp), whether and how to claim a saved one it restores
// (MayClaim, ClaimSaved, Unclaim), and this node's name (ID, "" on a
// single node).
type Home interface {
	Fenced(id string) error
	GiveUp(id string)
	MayClaim(r *Record) bool
	ClaimSaved(ctx context.Context, r *Record) bool
	Unclaim(ctx context.Context, id string)
	ID() string
}

// Standalone is a single node: it holds every session it saves.
type Standalone struct{}

var _ Home = Standalone{}

func (Standalone) Fenced(string) error                      { return nil }
func (Standalone) GiveUp(string)                            {}
func (Standalone) MayClaim(*Record) bool                    { return true }
func (Standalone) ClaimSaved(context.Context, *Record) bool { return true }
func (Standalone) Unclaim(context.Context, string)          {}
func (Standalone) ID() string                               { return "" }
