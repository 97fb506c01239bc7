package server

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"math/big"
	"strings"
)

// One-time join codes let a human join a session no owner terminal can
// approve a join for: one raxol_start started, or the stdio session of
// [ServeStdio] served with SSH. The code lives with the
// session in the lifecycle and ends with it.

const (
	// joinCodeLen and joinCodeAlphabet: 10 characters from 31 that cannot
	// be confused with one another (no 0/O, 1/I/L) are about 49 bits.
	joinCodeLen      = 10
	joinCodeAlphabet = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
	// joinCodeTries wrong codes burn a session's join code.
	joinCodeTries = 5
)

// joinCode is a session's one-time join code.
type joinCode struct {
	code  string
	tries int
}

// issueCode gives live session id a fresh one-time join code.
func (s *Server) issueCode(id string) (string, error) {
	b := make([]byte, joinCodeLen)
	n := big.NewInt(int64(len(joinCodeAlphabet)))
	for i := range b {
		k, err := rand.Int(rand.Reader, n)
		if err != nil {
			return "", fmt.Errorf("join code: %w", err)
		}
		b[i] = joinCodeAlphabet[k.Int64()]
	}
	code := string(b)
	if !s.life.setCode(id, &joinCode{code: code}) {
		return "", fmt.Errorf("join code for session %s: %w", id, ErrNoSession)
	}
	return code, nil
}

// normalizeCode forgives case, spaces and dashes in a typed code.
func normalizeCode(code string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '\t':
			return -1
		}
		if r >= 'a' && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, strings.TrimSpace(code))
}

var dummyJoinCode = strings.Repeat("2", joinCodeLen)

// claimJoinCode reports whether code is the live session's current join
// code, and if so uses it up: a code admits one human, once. A wrong code
// counts against the session's code, which is burned after 5 wrong tries
// (a used or burned code never matches again). Unknown sessions, ended
// sessions, sessions without a code and wrong codes all answer false, in
// the same time (the comparison is constant-time).
//
// The SSH join path calls it for a session no owner terminal can approve
// a join for (RequestJoin returned session.ErrNoTerminal). True admits the
// human as the session's driver-owner.
func (s *Server) claimJoinCode(sessionID, code string) bool {
	got := []byte(normalizeCode(code))
	var ok bool
	s.life.withCode(sessionID, func(jc *joinCode) bool {
		want := dummyJoinCode
		if jc != nil {
			want = jc.code
		}
		match := subtle.ConstantTimeCompare(got, []byte(want)) == 1
		switch {
		case jc == nil:
			return false
		case match:
			ok = true
			s.log.Info("join code used", "session", sessionID)
			return false
		}
		jc.tries++
		if jc.tries >= joinCodeTries {
			s.log.Warn("join code burned after wrong tries", "session", sessionID, "tries", jc.tries)
			return false
		}
		return true
	})
	return ok
}
