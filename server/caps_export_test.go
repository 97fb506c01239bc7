package server

// What the caps tests (caps_*_test.go) read of the server's own counts
// while clients race.

// SSHConnectionsFrom is how many admitted SSH connections count for ip.
func (s *Server) SSHConnectionsFrom(ip string) int { return s.admit.openFrom(ip) }

// SSHChannelsOpen is how many session channels are counted now over
// every SSH connection.
func (s *Server) SSHChannelsOpen() int {
	s.channels.mu.Lock()
	defer s.channels.mu.Unlock()
	n := 0
	for _, v := range s.channels.n {
		n += v
	}
	return n
}

// HTTPConnectionsFrom is how many HTTP connections from ip hold a place
// of the per-address cap now (0 before Start).
func (s *Server) HTTPConnectionsFrom(ip string) int {
	s.mu.Lock()
	l, _ := s.httpLn.(*perIPListener)
	s.mu.Unlock()
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[ip]
}
