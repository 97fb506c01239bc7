// Package metrics holds the process's Prometheus metrics and serves them.
//
// In: events from the other packages (a session opened or closed, an SSH
// connection ended with an outcome, an auth failure, a connection limit hit,
// a dispatcher fold timed, an Update or View failure, bytes written to a
// terminal). Out: an [http.Handler] exposing them in the Prometheus text and
// OpenMetrics formats, from a [prometheus.Registry] owned by one [Metrics]
// (never the global default registry, so tests and embedded servers stay
// isolated).
//
// Label values come only from fixed sets ([Outcomes], [Limits]); anything
// else is counted under "other", and every series is created up front so it
// is exported at zero. No session id, user, key fingerprint or address is
// ever a label.
//
// A nil *Metrics is valid: every method on it is a no-op (Handler returns a
// 404 handler, CountingWriter returns its argument), so packages can be run
// and tested without metrics. The fields themselves must not be used through
// a nil *Metrics; use the methods where metrics may be disabled.
package metrics
