package server

// SSHConnections is how many SSH connections hold an admission slot now
// (a connection's slot is released when the server sees it close, a
// moment after its session ended).
func (s *Server) SSHConnections() int { return s.admit.open() }
