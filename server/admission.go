package server

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"charm.land/ssh"
	"golang.org/x/time/rate"

	"github.com/raxol-ssh/raxol-ssh/metrics"
)

// rejectKey holds, in a connection's context, why the connection is over a
// limit. Such a connection still completes its handshake so its user reads
// the reason in one line, but it is closed soon after.
type rejectKeyType struct{}

var rejectKey rejectKeyType

// admission counts open TCP connections, in total and per remote IP.
type admission struct {
	maxConns, maxPerIP int
	// rejectGrace is how long an over-limit connection may stay to read
	// its reason before it is closed.
	rejectGrace time.Duration
	metrics     *metrics.Metrics

	// failures is the failed-login budget of SSH: its own, not shared
	// with /mcp's wrong API keys.
	failures *failureBudget

	mu        sync.Mutex // protects the following
	total     int
	perIP     map[string]int
	rejecting int // over-limit connections still open to read their reason
}

// maxRejecting bounds the over-limit connections kept open to show their
// reason; beyond it, excess connections are closed at once.
const maxRejecting = 64

func newAdmission(maxConns, maxPerIP, authFailures int, authWindow time.Duration, m *metrics.Metrics) *admission {
	return &admission{
		maxConns:    maxConns,
		maxPerIP:    maxPerIP,
		rejectGrace: 10 * time.Second,
		metrics:     m,
		perIP:       make(map[string]int),
		failures:    newFailureBudget(authFailures, authWindow),
	}
}

// authFailed records a failed SSH login from ip.
func (a *admission) authFailed(ip string) { a.failures.spend(ip) }

// authBlocked reports whether ip has used up its failed SSH logins.
func (a *admission) authBlocked(ip string) bool { return a.failures.exhausted(ip) }

// failureBudget is how many failed authentications each address may make:
// a burst of n, refilling n per window. Each kind of credential (SSH
// logins, /mcp API keys) has its own, so failures of one never refuse the
// other.
type failureBudget struct {
	burst  int
	refill rate.Limit

	mu    sync.Mutex // protects addrs
	addrs map[string]*rate.Limiter
}

// maxTrackedAddrs bounds the addresses a failureBudget remembers.
const maxTrackedAddrs = 10_000

func newFailureBudget(n int, window time.Duration) *failureBudget {
	return &failureBudget{burst: n, refill: rate.Limit(float64(n) / window.Seconds()), addrs: make(map[string]*rate.Limiter)}
}

// spend records a failure from ip; it reports false when ip had none left
// (the failure is then not recorded: a blocked address stays blocked only
// until its budget refills).
func (b *failureBudget) spend(ip string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.addrs[ip]
	if !ok {
		if len(b.addrs) >= maxTrackedAddrs {
			// Forget addresses that have fully recovered; if none has,
			// forget all rather than grow without bound.
			for k, v := range b.addrs {
				if v.Tokens() >= float64(b.burst) {
					delete(b.addrs, k)
				}
			}
			if len(b.addrs) >= maxTrackedAddrs {
				clear(b.addrs)
			}
		}
		l = rate.NewLimiter(b.refill, b.burst)
		b.addrs[ip] = l
	}
	return l.Allow()
}

// exhausted reports whether ip has used up its budget.
func (b *failureBudget) exhausted(ip string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	l, ok := b.addrs[ip]
	return ok && l.Tokens() < 1
}

// connCallback admits or tags a new connection; see [rejectKey].
func (a *admission) connCallback(ctx ssh.Context, c net.Conn) net.Conn {
	ip := hostOf(c.RemoteAddr())
	if a.authBlocked(ip) {
		// Too many failed logins: no handshake at all until it refills.
		a.metrics.LimitRejected(metrics.LimitAuthFailures)
		a.metrics.Connection(metrics.OutcomeRejected)
		return nil
	}
	ac, limit, reason, showReason := a.reserve(c, ip)
	if ac != nil {
		ctx.SetValue(admittedKey, ac)
		return ac
	}
	a.metrics.LimitRejected(limit)
	if !showReason {
		a.metrics.Connection(metrics.OutcomeRejected)
		return nil
	}
	ctx.SetValue(rejectKey, reason)
	rc := &admittedConn{Conn: c, release: func() {
		a.mu.Lock()
		a.rejecting--
		a.mu.Unlock()
	}}
	rc.timer = time.AfterFunc(a.rejectGrace, func() { _ = rc.Close() })
	return rc
}

// reserve checks both caps for a connection c from ip and counts it, under
// one lock, so that concurrent connections are admitted one by one: it
// returns c admitted (its slot given back once, when it closes), or which
// limit refused it, why, and whether it may stay to read that (then it
// holds one of the maxRejecting places until it closes).
func (a *admission) reserve(c net.Conn, ip string) (ac *admittedConn, limit, reason string, showReason bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.maxConns > 0 && a.total >= a.maxConns:
		reason = fmt.Sprintf("the server is full (%d connections); try again later", a.maxConns)
		limit = metrics.LimitMaxConnections
	case a.maxPerIP > 0 && a.perIP[ip] >= a.maxPerIP:
		reason = tooManyConnsFrom(ip, a.maxPerIP)
		limit = metrics.LimitMaxPerIP
	default:
		a.total++
		a.perIP[ip]++
		ac = &admittedConn{Conn: c, ip: ip}
		ac.release = func() { a.release(ac) }
		return ac, "", "", false
	}
	if a.rejecting >= maxRejecting {
		return nil, limit, reason, false
	}
	a.rejecting++
	return nil, limit, reason, true
}

// release gives back ac's slot, under the address it counts for (its
// own, or the one it carries: see carry). admittedConn.Close calls it
// once.
func (a *admission) release(ac *admittedConn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.total--
	if a.perIP[ac.ip]--; a.perIP[ac.ip] <= 0 {
		delete(a.perIP, ac.ip)
	}
	ac.released = true
}

// openFrom returns the number of admitted connections counted for ip.
func (a *admission) openFrom(ip string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.perIP[ip]
}

// tooManyConnsFrom is what a connection over the per-address limit is told.
func tooManyConnsFrom(ip string, limit int) string {
	return fmt.Sprintf("too many connections from %s (limit %d); close one and try again", ip, limit)
}

// open returns the number of admitted connections.
func (a *admission) open() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.total
}

// admittedKey holds, in a connection's context, its *admittedConn.
type admittedKeyType struct{}

var admittedKey admittedKeyType

// admittedConn releases its admission slot once, when closed.
type admittedConn struct {
	net.Conn
	release func()
	timer   *time.Timer
	once    sync.Once

	// Protected by admission.mu: the address the slot counts for, and
	// whether it moved there (carry) or was released.
	ip                string
	carried, released bool
}

func (c *admittedConn) Close() error {
	c.once.Do(func() {
		if c.timer != nil {
			c.timer.Stop()
		}
		c.release()
	})
	return c.Conn.Close()
}

func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return h
}

// perIPListener refuses an HTTP connection from an address that already
// has max open, so that one address cannot take every slot of the HTTP
// listener. A refused client is answered 429 with a reason (by at most
// maxRefusing goroutines at once, each for at most a second; beyond that
// the connection is just closed). Connections from trusted proxies are
// not counted: their clients are known per request only (see
// proxiedRequests).
type perIPListener struct {
	net.Listener
	max      int
	trusted  trustedProxies
	refused  func()
	refusing chan struct{} // semaphore of answering goroutines

	mu sync.Mutex
	n  map[string]int
}

const maxRefusing = 64

func newPerIPListener(l net.Listener, max int, trusted trustedProxies, refused func()) *perIPListener {
	return &perIPListener{Listener: l, max: max, trusted: trusted, refused: refused, refusing: make(chan struct{}, maxRefusing), n: map[string]int{}}
}

func (l *perIPListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.trusted.contains(addrOf(c.RemoteAddr())) {
			return c, nil
		}
		ip := hostOf(c.RemoteAddr())
		l.mu.Lock()
		over := l.n[ip] >= l.max
		if !over {
			l.n[ip]++
		}
		l.mu.Unlock()
		if !over {
			return &ipConn{Conn: c, release: func() { l.release(ip) }}, nil
		}
		l.refused()
		select {
		case l.refusing <- struct{}{}:
			go func() {
				defer func() { <-l.refusing }()
				refuse(c)
			}()
		default:
			_ = c.Close()
		}
	}
}

// refuse reads the request head (so that the client reads the answer as
// the answer to its request), answers 429 and closes, within a second.
func refuse(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	var head []byte
	buf := make([]byte, 512)
	for len(head) < 8<<10 && !strings.Contains(string(head), "\r\n\r\n") {
		n, err := c.Read(buf)
		head = append(head, buf[:n]...)
		if err != nil {
			return
		}
	}
	_, _ = io.WriteString(c, tooManyConnections)
}

func (l *perIPListener) release(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[ip]--; l.n[ip] <= 0 {
		delete(l.n, ip)
	}
}

// tooManyConnections is the whole answer to a refused HTTP connection.
var tooManyConnections = func() string {
	body := "too many connections from your address\n"
	return fmt.Sprintf("HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

// ipConn gives back its address's place once, when first closed.
type ipConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *ipConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
