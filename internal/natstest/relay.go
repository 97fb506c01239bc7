package natstest

import (
	"fmt"
	"io"
	"net"
	"sync"
)

// relay is a TCP relay on a fixed loopback port to a target address,
// whose connections can all be cut at once (and new ones refused) and
// then let through again: how a Cluster makes a server vanish from the
// network without a word, as a kill -9 or a partition does.
type relay struct {
	addr, target string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newRelay listens on addr and relays to target.
func newRelay(addr, target string) (*relay, error) {
	r := &relay{addr: addr, target: target, conns: map[net.Conn]struct{}{}}
	return r, r.open()
}

// open listens again (after cut).
func (r *relay) open() error {
	r.mu.Lock()
	listening := r.ln != nil
	r.mu.Unlock()
	if listening {
		return nil
	}
	ln, err := net.Listen("tcp", r.addr)
	if err != nil {
		return fmt.Errorf("natstest: relay on %s: %w", r.addr, err)
	}
	r.mu.Lock()
	r.ln = ln
	r.mu.Unlock()
	r.wg.Go(func() { r.accept(ln) })
	return nil
}

func (r *relay) accept(ln net.Listener) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", r.target)
		if err != nil {
			in.Close()
			continue
		}
		r.mu.Lock()
		if r.ln != ln { // cut meanwhile
			r.mu.Unlock()
			in.Close()
			out.Close()
			return
		}
		r.conns[in], r.conns[out] = struct{}{}, struct{}{}
		r.mu.Unlock()
		r.wg.Go(func() { r.pipe(out, in) })
		r.wg.Go(func() { r.pipe(in, out) })
	}
}

func (r *relay) pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	dst.Close()
	src.Close()
	r.mu.Lock()
	delete(r.conns, dst)
	delete(r.conns, src)
	r.mu.Unlock()
}

// cut closes every relayed connection and stops listening.
func (r *relay) cut() {
	r.mu.Lock()
	if r.ln != nil {
		r.ln.Close()
		r.ln = nil
	}
	for c := range r.conns {
		c.Close()
	}
	clear(r.conns)
	r.mu.Unlock()
}

// close cuts and waits for the relay's goroutines.
func (r *relay) close() {
	r.cut()
	r.wg.Wait()
}
