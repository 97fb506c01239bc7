package server

import (
	"fmt"
	"path/filepath"

	"github.com/raxol-ssh/raxol-ssh/server/internal/saver"
	"github.com/raxol-ssh/raxol-ssh/session"
	"github.com/raxol-ssh/raxol-ssh/store"
)

// Saving sessions is package saver's (server/internal/saver): this file
// makes the saver from the options and plugs it in, as an observer of
// the lifecycle (saverObserver), asking the cluster node about a
// session's home in a cluster (clusternode.Node is a saver.Home).

// openSnapshots opens the snapshot store for an app with a codec and
// makes its saver, or returns nil when sessions are not saved.
func (s *Server) openSnapshots() (*saver.Saver, error) {
	o := s.opts.Snapshots
	if s.app.Snapshots == nil || o.Disabled {
		if o.Store != nil {
			_ = o.Store.Close()
		}
		return nil, nil
	}
	st := o.Store
	if st == nil {
		var err error
		field := "Options.DataDir"
		if s.cluster != nil {
			field = "Options.Cluster.NATSURL"
			st, err = s.cluster.SnapshotStore()
		} else {
			st, err = store.OpenBolt(filepath.Join(s.opts.DataDir, SnapshotFileName), store.BoltOptions{})
		}
		if err != nil {
			return nil, s.opts.optionError(field, fmt.Errorf("snapshot store: %w", err))
		}
	}
	var home saver.Home = saver.Standalone{}
	if s.cluster != nil {
		home = s.cluster.Node
	}
	c := s.app.Snapshots
	return saver.New(saver.Config{
		App: s.app.Name, ResumeGrace: s.opts.SSH.ResumeGrace, Registry: s.sessions, Restore: s.life.restore,
		Panics: s.panics, Log: s.log, Metrics: s.metrics, Home: home,
		Codec: saver.Codec{Version: c.Version, Encode: c.Encode, Decode: c.Decode},
		Store: st, Every: o.Every, MaxBytes: o.MaxBytes,
	}), nil
}

// saverObserver is the saver as an observer of the lifecycle
// (sessionObserver): it saves what the lifecycle owns, and the session
// raxol_start hands out before its token goes.
type saverObserver struct{ p *saver.Saver }

var _ sessionObserver = saverObserver{}

func (o saverObserver) sessionOwned(se *session.Session, sshOwned bool, startedBy string) {
	o.p.Track(se, sshOwned, startedBy)
}
func (o saverObserver) sessionHandedOut(se *session.Session) { o.p.SaveStarted(se) }
func (saverObserver) sessionsChanged()                       {}

// describeSnapshots is the posture's word on saving sessions.
func (s *Server) describeSnapshots() string {
	if s.app.Snapshots == nil {
		return "off (the app has no snapshot codec: sessions end with the server)"
	}
	if p := s.persist.Load(); p != nil {
		return p.Describe()
	}
	return "off (" + s.opts.setting("Options.Snapshots.Disabled") + ")"
}
