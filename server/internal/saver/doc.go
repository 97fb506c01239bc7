// Package saver saves a server's sessions that can come back to a
// snapshot store, and brings them back at start or when a cluster node
// adopts them.
//
// What flows in: a Config (the app's name and codec, the store, the
// session registry, the RestoreFunc that hands a restored session to its
// owner, and the Home it asks about a session's home: Standalone on a
// single node, the cluster node in a cluster); the sessions to save
// (Track, SaveStarted), their ends (Ended, Abandon) and the drain
// (BeginDrain, Close). What flows out: records in the store (Record),
// written at most once per Config.Every per session and before anything
// that says who may act is acknowledged (the session's saver and, in a
// cluster, its committer); sessions restored into the registry
// (RestoreAll, RestoreOne); metrics and log lines.
//
// It imports nothing of the server: package server makes one with New
// and plugs it in as an observer of its sessions' lifecycle.
package saver
