package server

import (
	"net"
	"sync"
	"testing"
	"time"

	"charm.land/ssh"
	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/metrics"
)

// capsCtx is the part of an ssh.Context admission uses: SetValue.
type capsCtx struct {
	ssh.Context
	mu   sync.Mutex
	vals map[any]any
}

func (c *capsCtx) SetValue(k, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.vals == nil {
		c.vals = map[any]any{}
	}
	c.vals[k] = v
}

// capsConn is a connection from a chosen address.
type capsConn struct {
	net.Conn
	remote net.Addr
}

func (c capsConn) RemoteAddr() net.Addr { return c.remote }

func newCapsConn(t interface{ Cleanup(func()) }, ip string) net.Conn {
	a, b := net.Pipe()
	t.Cleanup(func() { _ = b.Close() })
	return capsConn{Conn: a, remote: &net.TCPAddr{IP: net.ParseIP(ip), Port: 40000}}
}

// TestCapsAdmissionModel: any sequence of SSH connections from a few
// addresses, closes (each closed once or twice) and carries to another
// address leaves admission's counts equal to a model's: a connection is
// admitted exactly when both caps have room, an over-limit one holds one
// of the reason places (or is dropped when they are all taken), and every
// close gives back exactly what it took.
func TestCapsAdmissionModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		maxConns := rapid.IntRange(1, 6).Draw(t, "maxConns")
		maxPerIP := rapid.IntRange(1, 4).Draw(t, "maxPerIP")
		a := newAdmission(maxConns, maxPerIP, 100, time.Minute, metrics.New())
		a.rejectGrace = time.Hour // closes are the test's
		ips := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}

		type held struct {
			c        net.Conn
			admitted bool
			ip       string
		}
		var open []held
		total, rejecting := 0, 0
		perIP := map[string]int{}

		check := func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.total != total || a.rejecting != rejecting {
				t.Fatalf("admission counts %d admitted, %d rejecting; model %d, %d", a.total, a.rejecting, total, rejecting)
			}
			if a.total > maxConns {
				t.Fatalf("%d admitted, cap %d", a.total, maxConns)
			}
			for _, ip := range ips {
				if a.perIP[ip] != perIP[ip] || a.perIP[ip] > maxPerIP {
					t.Fatalf("%s: admission counts %d, model %d, cap %d", ip, a.perIP[ip], perIP[ip], maxPerIP)
				}
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"connect": func(t *rapid.T) {
				ip := rapid.SampledFrom(ips).Draw(t, "ip")
				nc := a.connCallback(&capsCtx{}, newCapsConn(t, ip))
				room := total < maxConns && perIP[ip] < maxPerIP
				switch {
				case room && nc == nil:
					t.Fatalf("a connection from %s refused with room", ip)
				case room:
					total++
					perIP[ip]++
					open = append(open, held{c: nc, admitted: true, ip: ip})
				case nc != nil:
					rejecting++
					open = append(open, held{c: nc})
				}
			},
			"close": func(t *rapid.T) {
				if len(open) == 0 {
					t.Skip("nothing open")
				}
				i := rapid.IntRange(0, len(open)-1).Draw(t, "i")
				h := open[i]
				open = append(open[:i], open[i+1:]...)
				_ = h.c.Close()
				_ = h.c.Close() // a second close gives back nothing more
				if h.admitted {
					total--
					perIP[h.ip]--
				} else {
					rejecting--
				}
			},
			"carry": func(t *rapid.T) {
				if len(open) == 0 {
					t.Skip("nothing open")
				}
				i := rapid.IntRange(0, len(open)-1).Draw(t, "i")
				h := &open[i]
				ac, ok := h.c.(*admittedConn)
				if !h.admitted || !ok {
					t.Skip("not admitted")
				}
				to := rapid.SampledFrom(ips).Draw(t, "to")
				a.mu.Lock()
				carried := ac.carried
				a.mu.Unlock()
				moved := a.carry(ac, to)
				switch {
				case carried || to == h.ip:
					if !moved {
						t.Fatalf("carry of an already carried connection refused")
					}
				case perIP[to] >= maxPerIP:
					if moved {
						t.Fatalf("carried to %s at its cap", to)
					}
				default:
					if !moved {
						t.Fatalf("carry to %s refused with room", to)
					}
					perIP[h.ip]--
					perIP[to]++
					h.ip = to
				}
			},
			"": func(t *rapid.T) { check() },
		})
		for _, h := range open {
			_ = h.c.Close()
		}
		total, rejecting, perIP = 0, 0, map[string]int{}
		check()
		if len(a.perIP) != 0 {
			t.Fatalf("addresses left counted: %v", a.perIP)
		}
	})
}

// TestCapsSlotsConcurrent: takers of a few keys released at once, each
// holding what it took until all have tried, never hold more than the cap
// of a key (each reads its key's count while it holds its place, and the
// places held once all have tried are counted), and once they all gave
// their places back (each twice) none is held.
func TestCapsSlotsConcurrent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(1, 5).Draw(t, "limit")
		keys := rapid.SliceOfN(rapid.IntRange(0, 2), 1, 40).Draw(t, "keys")
		s := newSlots[int](limit)
		barrier, allTried := make(chan struct{}), make(chan struct{})
		var (
			tried, wg sync.WaitGroup
			mu        sync.Mutex
			peak      = map[int]int{}
			taken     = map[int]int{}
		)
		for _, k := range keys {
			tried.Add(1)
			wg.Go(func() {
				<-barrier
				release, ok := s.tryTake(k)
				defer release()
				defer release()
				if ok {
					n := s.held(k)
					mu.Lock()
					peak[k] = max(peak[k], n)
					taken[k]++
					mu.Unlock()
				}
				tried.Done()
				<-allTried
			})
		}
		close(barrier)
		tried.Wait()
		for k, n := range taken {
			if n > limit || peak[k] > limit {
				t.Fatalf("key %d: %d places taken and held at once (%d seen by a holder), cap %d", k, n, peak[k], limit)
			}
		}
		close(allTried)
		wg.Wait()
		if len(taken) == 0 {
			t.Fatal("nobody took a place")
		}
		if n := s.total(); n != 0 {
			t.Fatalf("%d places held after all gave theirs back", n)
		}
	})
}
