package server

import (
	"time"

	"github.com/raxol-ssh/raxol-ssh/session"
)

// SSHConnections is how many SSH connections hold an admission slot now
// (a connection's slot is released when the server sees it close, a
// moment after its session ended).
func (s *Server) SSHConnections() int { return s.admit.open() }

// KillCluster is what a crash looks like to the cluster's other nodes:
// the node stops its heartbeat and closes its NATS connection, removing
// nothing, and its HTTP and SSH listeners close. The rest of the server
// is left for the test's cleanup.
func (s *Server) KillCluster() {
	// A dead node saves nothing more, nor deletes what its sessions'
	// ends would.
	s.persist.Load().Halt()
	s.cluster.close()
	s.mu.Lock()
	httpLn, sshLn := s.httpLn, s.sshLn
	s.mu.Unlock()
	_ = s.http.Close()
	if httpLn != nil {
		_ = httpLn.Close()
	}
	if sshLn != nil {
		_ = sshLn.Close()
	}
}

// IssueJoinCode gives live session id a fresh one-time join code.
func (s *Server) IssueJoinCode(id string) (string, error) { return s.issueCode(id) }

// CloseSSH closes the SSH listener and every SSH connection at once, with
// no exit status or reason: what a crashed process looks like to its SSH
// clients.
func (s *Server) CloseSSH() { _ = s.ssh.Close() }

// SetKeepAlive sets how often each agent is pinged (20s unless a test
// shortens it).
func (o *MCPOptions) SetKeepAlive(d time.Duration) { o.keepAlive = d }

// SaveHeadless has the saver track a session StartHeadless started, as
// raxol_start's are (a benchmark's session, saved like an agent's).
func (s *Server) SaveHeadless(se *session.Session) { s.persist.Load().Track(se, false, "bench") }

// Sessions is the registry of live sessions, for the server's own tests
// (not in the public API: a caller of server gets Session and
// LiveSessions).
func (s *Server) Sessions() *session.Manager { return s.sessions }

// SavedVersion is the dispatcher version of session id's model that the
// saver last stored, and whether it stored any.
func (s *Server) SavedVersion(id string) (uint64, bool) {
	return s.persist.Load().SavedVersion(id)
}
