package saver

import "errors"

// ErrAbandoned is what a change to a copy this node gave up is answered
// with (Abandon: another node claimed the session).
var ErrAbandoned = errors.New("this node no longer holds the session: it moved to another node")

// errFenced marks a write refused because the session is not this
// node's to write now.
var errFenced = errors.New("not this node's to write")

// errExpired and errHeldByPeer are decodeRecord's reasons not to restore
// a record that are no failure of the record.
var (
	errExpired    = errors.New("saved session older than the resume grace")
	errHeldByPeer = errors.New("a live peer holds the session")
)
