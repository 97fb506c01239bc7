package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/ssh"
	gossh "golang.org/x/crypto/ssh"

	"github.com/raxol-ssh/raxol-ssh/cluster"
	"github.com/raxol-ssh/raxol-ssh/metrics"
)

// SSH from any node of a cluster
//
// `join <id> [code]` and `resume <id>` on a node that does not hold the
// session are bridged to the session's home node over node-to-node SSH,
// so that the home decides exactly as if the human had come straight to
// it: ownership, join prompts, join codes, rate limits, caps and logs all
// see the human's identity.
//
//   - Authentication: the bridging node logs in to the home's SSH address
//     as user [peerSSHUser] with the cluster's peer key
//     ([cluster.Node.PeerSigner], derived from the cluster secret, the
//     same on every node). The home accepts that key even when an
//     authorized keys file is set.
//   - The home's host key: before anything about the human is sent, the
//     bridging node asks for proof that the server it reached is a node
//     of the cluster: a global request [peerProofRequest], answered only
//     on a connection authenticated with the peer key, with a signature by
//     the peer key over [peerProofDomain] and this connection's SSH session
//     id. The session id is the exchange hash of the key exchange, which
//     the server signed with its host key, so the proof binds the host key
//     just presented to a holder of the cluster secret; a man in the
//     middle has a different session id on each side and can neither
//     forge the signature nor get one for its own session id (the home
//     answers only a peer, and the bridge's login signature is bound to
//     the middleman's session id too). Ordinary clients see nothing of
//     this: the node presents its usual host key to everyone. (Any node
//     holding the secret can pass as any other: the secret is the trust.)
//   - Carried identity: after the proof, the session channel carries the
//     human's SSH user, key fingerprint and address as env requests
//     ([envBridgeUser], [envBridgeKey], [envBridgeAddr]; [envBridgeNode],
//     the bridging node's id, is for the logs only), then the client's own
//     environment (without those names), a PTY with the client's TERM,
//     modes and window size, and the command as an exec request. The home
//     believes those variables ONLY on a connection authenticated with the
//     peer key ([Server.acceptBridged]); from anyone else they are plain
//     environment and mean nothing. A peer connection without them, or
//     with any command but join and resume, is refused, and it is never
//     bridged on again.
//   - Per-address limits: a peer connection's admission slot moves from the
//     peer node's address to the carried client address ([admission.carry];
//     refused like a direct connection when that address has its limit),
//     so a busy bridging node never uses up its own address's slots at
//     home, and a human counts the same through any node. The join rate
//     limit and the session caps read the carried key and address.
//   - The bridge: bytes both ways, window changes passed on, the home's
//     stderr (its reason line) and exit status passed back. It ends when
//     the session ends at home, the client leaves (the home sees a
//     dropped connection), a limit of this node ends it, this node drains
//     ("the server is stopping", as for its own terminals), or the home
//     goes away: the connection drops, keepalives stop being answered, or
//     the home leaves this node's view of the cluster (its heartbeat
//     expired) and the connection has not ended on its own within
//     [bridgeLostGrace] (a draining home ends its terminals itself, with
//     its own reason line). Then the client is told [errServerWentAway].

const (
	// peerSSHUser is the SSH user a bridging node logs in as; the human's
	// user name travels in envBridgeUser, after the home proved itself.
	peerSSHUser = "raxol-peer"

	envBridgePrefix = "RAXOL_BRIDGE_"
	envBridgeUser   = envBridgePrefix + "USER" // the human's SSH user
	envBridgeKey    = envBridgePrefix + "KEY"  // its key's SHA256 fingerprint; absent without a key
	envBridgeAddr   = envBridgePrefix + "ADDR" // its address, ip:port
	envBridgeNode   = envBridgePrefix + "NODE" // the bridging node's id (logs)

	// peerProofRequest is the global request a home node answers, on a
	// connection authenticated with the peer key, with a signature by the
	// peer key over peerProofMessage(session id).
	peerProofRequest = "raxol-peer-proof@raxol-ssh"
	peerProofDomain  = "raxol-ssh peer host proof v1"
)

const (
	// bridgeLookupTimeout bounds the directory lookups of join, resume and
	// the picker.
	bridgeLookupTimeout = 3 * time.Second
	// bridgeSetupTimeout bounds dialing the home, the handshake, the
	// proof and opening the session.
	bridgeSetupTimeout = 10 * time.Second
	// bridgeLivenessEvery is how often a bridge looks for its home in the
	// node's view of the cluster.
	bridgeLivenessEvery = time.Second
	// bridgeLostGrace is how long a home missing from the view may keep
	// the bridge before it is cut.
	bridgeLostGrace = 2 * time.Second
	// bridgeKeepaliveEvery is the keepalive interval, and how long an
	// answer may take before the home counts as gone.
	bridgeKeepaliveEvery = 15 * time.Second
	// bridgeHangUpAfter is how long the client's output may hold a cut
	// bridge (a client that stopped reading) before its connection is
	// closed.
	bridgeHangUpAfter = 2 * time.Second
)

// peerSSH is the node's SSH identity toward its peers.
type peerSSH struct {
	signer gossh.Signer
	pub    []byte // the peer public key, wire format
}

func newPeerSSH(n *cluster.Node) (*peerSSH, error) {
	signer, err := n.PeerSigner()
	if err != nil {
		return nil, err
	}
	return &peerSSH{signer: signer, pub: signer.PublicKey().Marshal()}, nil
}

// isPeerKey reports whether k is the cluster's peer key. False for a
// single node.
func (c *clusterNode) isPeerKey(k gossh.PublicKey) bool {
	if c == nil || c.peer == nil || k == nil {
		return false
	}
	return bytes.Equal(k.Marshal(), c.peer.pub)
}

// peerProofMessage is what the peer proof signs for an SSH session id.
func peerProofMessage(sessionID []byte) []byte {
	return append([]byte(peerProofDomain+"\x00"), sessionID...)
}

// answerPeerProof is the SSH server's handler of peerProofRequest: on a
// connection authenticated with the peer key, the peer key's signature
// over the connection's session id; refused on any other.
func (s *Server) answerPeerProof(ctx ssh.Context, _ *ssh.Server, _ *gossh.Request) (bool, []byte) {
	cn := s.cluster
	key, _ := ctx.Value(ssh.ContextKeyPublicKey).(gossh.PublicKey)
	if !cn.isPeerKey(key) {
		return false, nil
	}
	meta, ok := ctx.Value(ssh.ContextKeyConn).(gossh.ConnMetadata)
	if !ok {
		return false, nil
	}
	sig, err := cn.peer.signer.Sign(rand.Reader, peerProofMessage(meta.SessionID()))
	if err != nil {
		s.log.Warn("cluster: signing the peer proof failed", "err", err)
		return false, nil
	}
	return true, gossh.Marshal(sig)
}

// sshPeers are an SSH connection's other nodes in a cluster: a
// connection made with the cluster's peer key is a peer's bridged one,
// and a join or resume of a session another node holds is bridged there.
type sshPeers struct{ cn *clusterNode }

var _ sshElsewhere = sshPeers{}

// acceptBridged takes the carried identity of a connection authenticated
// with the cluster's peer key: the human's user, key and address replace
// the peer's, and its admission slot moves to that address. It returns
// why such a connection is refused, or "" (also for every ordinary
// client, whose RAXOL_BRIDGE_* variables are ignored). Call it before
// the connection starts.
func (p sshPeers) acceptBridged(c *conn) string {
	cn := p.cn
	if !cn.isPeerKey(c.sess.PublicKey()) {
		return ""
	}
	c.fp = "" // the peer key is nobody's identity
	c.bridgedIn = true
	env := map[string]string{}
	for _, kv := range c.sess.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, envBridgePrefix) {
			env[k] = v
		}
	}
	user, hasUser := env[envBridgeUser]
	ap, err := netip.ParseAddrPort(env[envBridgeAddr])
	if !hasUser || err != nil {
		return "a bridged connection must carry its client's user and address"
	}
	key := env[envBridgeKey]
	if key != "" && !isFingerprint(key) {
		return "a bridged connection carried a malformed key fingerprint"
	}
	if cmd := c.sess.Command(); len(cmd) < 2 || (cmd[0] != "join" && cmd[0] != "resume") || !ourCommand(cmd) {
		return "a peer node may only bridge `join <session-id> [code]` and `resume <session-id>`"
	}
	ip := ap.Addr().Unmap()
	if ac, ok := c.sess.Context().Value(admittedKey).(*admittedConn); ok {
		if !cn.admit.carry(ac, ip.String()) {
			cn.metrics.LimitRejected(metrics.LimitMaxPerIP)
			return tooManyConnsFrom(ip.String(), cn.admit.maxPerIP)
		}
	}
	ap = netip.AddrPortFrom(ip, ap.Port())
	c.user, c.fp, c.remote, c.addr = user, key, ap.String(), net.TCPAddrFromAddrPort(ap)
	cn.log.Info("ssh session bridged from a peer node", "node", env[envBridgeNode], "peer", c.sess.RemoteAddr().String(),
		"user", c.user, "key", c.fp, "remote", c.remote, "command", c.command)
	return ""
}

// isFingerprint reports whether s looks like gossh.FingerprintSHA256's.
func isFingerprint(s string) bool {
	b64, ok := strings.CutPrefix(s, "SHA256:")
	if !ok || len(b64) != 43 {
		return false
	}
	for _, r := range b64 {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/') {
			return false
		}
	}
	return true
}

// carry counts the admitted connection ac under ip from now on instead of
// its TCP peer's address: the connection of a peer node bridging a client
// from ip. It reports false, changing nothing, when ip has its limit of
// connections already. A connection is moved once (a bridge opens one
// session channel per connection); later calls change nothing.
func (a *admission) carry(ac *admittedConn, ip string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ac.released || ac.carried || ac.ip == ip {
		return true
	}
	if a.maxPerIP > 0 && a.perIP[ip] >= a.maxPerIP {
		return false
	}
	if a.perIP[ac.ip]--; a.perIP[ac.ip] <= 0 {
		delete(a.perIP, ac.ip)
	}
	a.perIP[ip]++
	ac.ip, ac.carried = ip, true
	return true
}

// isBridgeToken reports whether s may be passed to a peer as a word of a
// command: an id or a join code, nothing a shell parser would split.
func isBridgeToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// bridgeAttach runs `join` or `resume` of a session this node does not
// hold: bridged to its home node when the directory knows it. It reports
// false when the directory does not (or the id cannot be a session's):
// the caller then answers as for any unknown id. A client bridged in from
// a peer is never bridged on.
func (p sshPeers) bridgeAttach(c *conn, verb, id, code string) bool {
	cn := p.cn
	if c.bridgedIn || !isBridgeToken(id) {
		return false
	}
	if code != "" {
		// The home forgives the same; a code with anything else in it
		// cannot be right.
		if code = normalizeCode(code); !isBridgeToken(code) {
			return false
		}
	}
	ctx, cancel := context.WithTimeout(c.ctx, bridgeLookupTimeout)
	_, home, err := cn.node.Lookup(ctx, id)
	cancel()
	switch {
	case errors.Is(err, cluster.ErrUnavailable):
		cn.log.Warn("cluster: join or resume refused: the directory is unavailable", "session", id, "user", c.user, "key", c.fp, "remote", c.remote, "err", err)
		c.end(errDirectoryDown)
		return true
	case err != nil, home.ID == cn.node.ID():
		return false
	}
	command := verb + " " + id
	if code != "" {
		command += " " + code
	}
	cn.runBridge(c, home, id, command)
	return true
}

// detachedElsewhere lists the owner's detached sessions the directory
// lists on other nodes (resumed through a bridge); none without the
// directory.
func (p sshPeers) detachedElsewhere(c *conn) []pickerItem {
	cn := p.cn
	if c.fp == "" || c.bridgedIn {
		return nil
	}
	var list []pickerItem
	ctx, cancel := context.WithTimeout(c.ctx, bridgeLookupTimeout)
	all, err := cn.node.Sessions(ctx)
	cancel()
	if err != nil {
		cn.log.Debug("cluster: the picker lists this node's sessions only", "err", err)
		return nil
	}
	self := cn.node.ID()
	for _, e := range all {
		if e.Node != self && e.Owner == c.fp && e.Detached && !e.Headless {
			list = append(list, pickerItem{ID: e.ID, Since: e.Updated, Agents: e.Agents})
		}
	}
	return list
}

// bridge is one terminal bridged to the home node of its session.
type bridge struct {
	cn   *clusterNode
	c    *conn
	home cluster.NodeInfo
	nc   net.Conn
	log  *slog.Logger

	client *gossh.Client // set by open
	// lost is set when the home went away: gone from the cluster's view,
	// or no answer to a keepalive.
	lost atomic.Bool
}

// runBridge bridges c to home, where it runs command, and records how it
// ended as c's end cause (nothing more when the home's own reason came through).
func (cn *clusterNode) runBridge(c *conn, home cluster.NodeInfo, id, command string) {
	c.mu.Lock()
	c.sid, c.role = id, "bridged to node "+home.ID
	c.mu.Unlock()
	log := cn.log.With("session", id, "home", home.ID, "user", c.user, "key", c.fp, "remote", c.remote)
	if home.SSHAddr == "" {
		log.Warn("cluster: cannot bridge: the home node has no SSH address")
		c.end(errServerUnreachable)
		return
	}
	dctx, cancel := context.WithTimeout(c.ctx, bridgeSetupTimeout)
	nc, err := (&net.Dialer{}).DialContext(dctx, "tcp", home.SSHAddr)
	cancel()
	if err != nil {
		if c.ctx.Err() == nil {
			log.Warn("cluster: cannot bridge: dialing the home node failed", "addr", home.SSHAddr, "err", err)
			c.end(errServerUnreachable)
		}
		return
	}
	b := &bridge{cn: cn, c: c, home: home, nc: nc, log: log}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop)
	defer nc.Close()
	wg.Go(func() { b.watch(stop) })

	sess, stdin, err := b.open(command)
	if err != nil {
		if !c.gone() && c.ctx.Err() == nil {
			log.Warn("cluster: cannot bridge to the home node", "addr", home.SSHAddr, "err", err)
			c.end(errServerUnreachable)
		}
		return
	}
	defer sess.Close()
	wg.Go(func() { b.keepalive(stop) })
	log.Info("cluster: terminal bridged to the session's home node", "addr", home.SSHAddr)

	c.mu.Lock()
	c.in = stdin
	c.resize = func(w ssh.Window) { _ = sess.WindowChange(w.Height, w.Width) }
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.in, c.resize = nil, nil
		c.mu.Unlock()
	}()
	b.finish(sess.Wait())
}

// open logs in to the home, checks its proof, and starts command in a
// session with the human's identity, environment and PTY.
func (b *bridge) open(command string) (*gossh.Session, io.WriteCloser, error) {
	c, peer := b.c, b.cn.peer
	_ = b.nc.SetDeadline(time.Now().Add(bridgeSetupTimeout))
	cfg := &gossh.ClientConfig{
		User: peerSSHUser,
		Auth: []gossh.AuthMethod{gossh.PublicKeys(peer.signer)},
		// Any host key for now: verifyHome checks, before anything of the
		// human is sent, that the server behind it holds the peer key.
		HostKeyCallback: func(string, net.Addr, gossh.PublicKey) error { return nil },
	}
	cc, chans, reqs, err := gossh.NewClientConn(b.nc, b.home.SSHAddr, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("ssh handshake: %w", err)
	}
	b.client = gossh.NewClient(cc, chans, reqs)
	if err := b.verifyHome(); err != nil {
		return nil, nil, err
	}
	sess, err := b.client.NewSession()
	if err != nil {
		return nil, nil, fmt.Errorf("open a session: %w", err)
	}
	fail := func(what string, err error) (*gossh.Session, io.WriteCloser, error) {
		_ = sess.Close()
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	carried := [][2]string{{envBridgeUser, c.user}, {envBridgeAddr, c.remote}, {envBridgeNode, b.cn.node.ID()}}
	if c.fp != "" {
		carried = append(carried, [2]string{envBridgeKey, c.fp})
	}
	for _, kv := range carried {
		if err := sess.Setenv(kv[0], kv[1]); err != nil {
			return fail("carry "+kv[0], err)
		}
	}
	for _, kv := range c.sess.Environ() {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.HasPrefix(k, envBridgePrefix) {
			continue // never the client's word for what we carry
		}
		_ = sess.Setenv(k, v) // beyond the home's env limits: dropped, as it would be there
	}
	w, h := c.size()
	if err := sess.RequestPty(c.pty.Term, h, w, c.pty.Modes); err != nil {
		return fail("request a PTY", err)
	}
	stdin, err := sess.StdinPipe()
	if err != nil {
		return fail("stdin", err)
	}
	sess.Stdout = b.cn.metrics.CountingWriter(c.sess)
	sess.Stderr = c.sess.Stderr()
	if err := sess.Start(command); err != nil {
		return fail("start "+strings.Fields(command)[0], err)
	}
	_ = b.nc.SetDeadline(time.Time{})
	if nw, nh := c.size(); nw != w || nh != h {
		_ = sess.WindowChange(nh, nw) // changed while the PTY was asked for
	}
	return sess, stdin, nil
}

// verifyHome checks the home's proof that it holds the cluster's peer key,
// bound to this connection's session id (and so to its host key).
func (b *bridge) verifyHome() error {
	ok, payload, err := b.client.SendRequest(peerProofRequest, true, nil)
	if err != nil {
		return fmt.Errorf("ask for the peer proof: %w", err)
	}
	if !ok {
		return fmt.Errorf("%w: it refused the peer proof", errNotAPeer)
	}
	var sig gossh.Signature
	if err := gossh.Unmarshal(payload, &sig); err != nil {
		return fmt.Errorf("%w: the peer proof is not a signature: %v", errNotAPeer, err)
	}
	if err := b.cn.peer.signer.PublicKey().Verify(peerProofMessage(b.client.SessionID()), &sig); err != nil {
		return fmt.Errorf("%w: %v", errNotAPeer, err)
	}
	return nil
}

// watch cuts the bridge (closes its connection) when the client leaves,
// a limit of this node ends the connection, this node drains, or the home
// leaves the cluster's view; then, should the client's output still hold
// the bridge, closes the client's connection. It returns when stop is
// closed.
func (b *bridge) watch(stop <-chan struct{}) {
	tick := time.NewTicker(bridgeLivenessEvery)
	defer tick.Stop()
	var missing time.Time
wait:
	for {
		select {
		case <-stop:
			return
		case <-b.c.ctx.Done(): // a limit (its reason is set), or the connection closed
		case <-b.c.inputDone: // the client left: home sees the connection drop
		case <-b.cn.life.drained:
			b.c.end(errStopping)
		case <-tick.C:
			if b.homeLive() {
				missing = time.Time{}
				continue
			}
			if missing.IsZero() {
				missing = time.Now()
			}
			if time.Since(missing) < bridgeLostGrace {
				continue
			}
			b.log.Warn("cluster: the session's home node left the cluster; ending its bridged terminal")
			b.lost.Store(true)
		}
		break wait
	}
	_ = b.nc.Close()
	t := time.NewTimer(bridgeHangUpAfter)
	defer t.Stop()
	select {
	case <-stop:
	case <-t.C:
		if cl, ok := b.c.sess.Context().Value(ssh.ContextKeyConn).(io.Closer); ok {
			_ = cl.Close()
		}
	}
}

// homeLive reports whether the home is in this node's view of the
// cluster.
func (b *bridge) homeLive() bool {
	return slices.ContainsFunc(b.cn.node.Nodes(), func(n cluster.NodeInfo) bool { return n.ID == b.home.ID })
}

// keepalive asks the home for an answer every bridgeKeepaliveEvery and
// cuts the bridge when none comes within as long (a dead link, a hung
// node). It returns when stop is closed or the connection ended.
func (b *bridge) keepalive(stop <-chan struct{}) {
	t := time.NewTicker(bridgeKeepaliveEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		timeout := time.AfterFunc(bridgeKeepaliveEvery, func() {
			b.log.Warn("cluster: the session's home node stopped answering; ending its bridged terminal")
			b.lost.Store(true)
			_ = b.nc.Close()
		})
		_, _, err := b.client.SendRequest("keepalive@openssh.com", true, nil)
		timeout.Stop()
		if err != nil {
			return
		}
	}
}

// finish records how the bridged session ended, from sess.Wait's err.
func (b *bridge) finish(err error) {
	c := b.c
	var exit *gossh.ExitError
	switch {
	case err == nil:
		c.end(errHomeEnded)
	case errors.As(err, &exit):
		// The home's reason line came through its stderr; its status is
		// 1 for any end but a normal one, which exit gives again.
		c.end(errHomeRefused)
	case c.gone():
		// The client left: nothing to tell.
	default:
		// Unless this node ended it first (a limit, a drain: its reason
		// stands).
		if c.end(errServerWentAway) && !b.lost.Load() {
			b.log.Warn("cluster: the connection to the session's home node ended", "err", err)
		}
	}
}
