// Package server is the composition root as a library: it serves any app
// over SSH, one session per terminal, with metrics and health over HTTP.
//
// What flows in: an [App] (a name and a constructor of fresh models) and
// [Options] (addresses, data directory, environment, authentication and
// limits). What flows out: listening SSH and HTTP servers, a posture log
// line at start and one line per finished connection, Prometheus metrics,
// and an orderly drain on [Server.Shutdown].
//
// An app author's own main serves an app in a few lines:
//
//	srv, err := server.New(server.App{Name: "hello", New: newModel}, server.Options{DataDir: dir})
//	if err != nil { ... }
//	err = srv.Run(ctx) // until ctx is done, then drains
package server
