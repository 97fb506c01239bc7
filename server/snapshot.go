package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/raxol-ssh/raxol-ssh/store"
	"github.com/raxol-ssh/raxol-ssh/ui"
)

// Defaults of [SnapshotOptions].
const (
	// DefaultSnapshotMaxBytes bounds one saved session (model and
	// record), under the 1 MiB a NATS message may carry.
	DefaultSnapshotMaxBytes = 512 << 10
	// DefaultSnapshotEvery is how often at most a session's changes are
	// saved.
	DefaultSnapshotEvery = time.Second
	// SnapshotFileName is the embedded store's file under Options.DataDir.
	SnapshotFileName = "sessions.db"
)

// SnapshotCodec saves and restores an app's model, so that its sessions
// survive a restart of the server or the loss of their node. An app opts
// in with App.Snapshots; [JSONCodec] covers models that marshal as JSON.
//
// Encode runs on the saver's goroutine with the model of a published
// snapshot, which it must only read (the dispatcher's rule for snapshot
// models). Decode gets the Version the snapshot was written with, so an
// app can migrate old snapshots or refuse them with an error; a refused
// snapshot is skipped, logged once and counted, and never stops a start.
type SnapshotCodec struct {
	// Version is the version of the encoding, saved with every snapshot;
	// the app changes it when its model changes.
	Version int
	// Encode turns a model into bytes.
	Encode func(ui.Model) ([]byte, error)
	// Decode turns bytes written with version back into a model.
	Decode func(version int, data []byte) (ui.Model, error)
}

// JSONCodec is a codec for a model type M that marshals as JSON (with
// encoding/json: exported fields, or MarshalJSON and UnmarshalJSON). It
// refuses snapshots of any other version than its own with
// ErrSnapshotVersion; an app that migrates writes its own Decode.
func JSONCodec[M ui.Model](version int) *SnapshotCodec {
	return &SnapshotCodec{
		Version: version,
		Encode: func(m ui.Model) ([]byte, error) {
			v, ok := m.(M)
			if !ok {
				var want M
				return nil, fmt.Errorf("model is a %T, the codec's is a %T", m, want)
			}
			return json.Marshal(v)
		},
		Decode: func(v int, data []byte) (ui.Model, error) {
			if v != version {
				return nil, fmt.Errorf("%w: version %d, this app reads %d", ErrSnapshotVersion, v, version)
			}
			var m M // a pointer type is allocated by Unmarshal
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, err
			}
			return m, nil
		},
	}
}

func (c *SnapshotCodec) check() error {
	if c.Encode == nil || c.Decode == nil {
		return errors.New("a codec needs both Encode and Decode")
	}
	return nil
}

// SnapshotOptions configure saving sessions. They apply to an app with a
// codec (App.Snapshots); without one sessions end with the server, as
// they always did. Sessions are saved and restored by a server that
// serves on listeners (ListenAndServe, Serve, StartOn); one only mounted
// into the caller's servers (Middleware, Handler) saves nothing.
type SnapshotOptions struct {
	// Disabled saves nothing even for an app with a codec.
	Disabled bool
	// MaxBytes bounds one saved session; a larger one is not saved (logged
	// once per session and counted in raxol_snapshot_failures_total
	// {reason="too_large"}) and the session runs on unsaved. Zero means
	// DefaultSnapshotMaxBytes.
	MaxBytes int
	// Every is how often at most one session's changes are saved; zero
	// means DefaultSnapshotEvery.
	Every time.Duration
	// Store is where snapshots go. Nil means the default: on a single
	// node a bbolt file, SnapshotFileName under Options.DataDir; in a
	// cluster the cluster's JetStream KV, so that any node can adopt a
	// lost node's sessions. A Store given here is closed by Shutdown.
	Store store.Store
}
