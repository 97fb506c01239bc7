package saver

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Codec saves and restores an app's model (the server's SnapshotCodec):
// Encode runs on the saver's goroutine with the model of a published
// snapshot, which it must only read; Decode gets the Version the record
// was written with.
type Codec struct {
	Version int
	Encode  func(ui.Model) ([]byte, error)
	Decode  func(version int, data []byte) (ui.Model, error)
}

// recordFormat is the version of the record below.
const recordFormat = 1

// Record is what the store holds for one session: the server's record
// (what session.Saved has, and how the session was started) around the
// model the app's codec encoded.
type Record struct {
	Format int    `json:"format"`
	App    string `json:"app"`
	// Version is the app codec's version that wrote Model.
	Version     int              `json:"version"`
	ID          string           `json:"id"`
	TokenSHA256 string           `json:"token_sha256"`
	Owner       session.Owner    `json:"owner"`
	Created     time.Time        `json:"created"`
	Activity    []session.Action `json:"activity,omitempty"`
	// Control is what the human let agents do (paused, focus only);
	// records written before it was saved have none: not restricted.
	Control session.Control `json:"control"`
	// SSHOwned is set for a session an SSH login started (restored
	// detached, for its owner to resume); StartedBy for one raxol_start
	// started (the owner key of its API key).
	SSHOwned  bool      `json:"ssh_owned,omitempty"`
	StartedBy string    `json:"started_by,omitempty"`
	Node      string    `json:"node,omitempty"`
	SavedAt   time.Time `json:"saved_at"`
	Model     []byte    `json:"model"`
}

func (r *Record) saved() (session.Saved, error) {
	var sv session.Saved
	h, err := hex.DecodeString(r.TokenSHA256)
	if err != nil || len(h) != len(sv.TokenHash) {
		return sv, errors.New("bad token hash")
	}
	copy(sv.TokenHash[:], h)
	sv.ID, sv.Owner, sv.Created, sv.Activity, sv.Control = r.ID, r.Owner, r.Created, r.Activity, r.Control
	return sv, nil
}

// DecodeRecord reads a record as the store holds it.
func DecodeRecord(data []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if r.Format != recordFormat {
		return nil, fmt.Errorf("record format %d, this server reads %d", r.Format, recordFormat)
	}
	return &r, nil
}
