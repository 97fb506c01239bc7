package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"

	"github.com/raxol-ssh/raxol-ssh/internal/gcpace"
)

// cgroupShare is the part of the cgroup's memory limit the command gives
// the Go runtime as its memory limit when GOMEMLIMIT is not set: the rest
// is for what the runtime does not count (the binary, thread stacks the
// OS gives, page tables) and for the runtime's overshoot of a soft limit.
const cgroupShare = 0.9

// cgroupMemoryLimit is where run reads the cgroup's memory limit (a
// variable so that a test can give the command a cgroup it does not run
// in).
var cgroupMemoryLimit = gcpace.CgroupMemoryLimit

// applyMemoryLimit tells the Go runtime the memory the process may use:
// GOMEMLIMIT when it is set (the runtime has read it already, and it is
// left alone), else cgroupShare of the cgroup's memory limit when cgroup
// reports one, else no limit. It returns the posture line's word on it
// and a function that puts the limit back (a command run in a test must
// not leave its limit to the process).
func applyMemoryLimit(getenv func(string) string, cgroup func() (uint64, bool)) (describe string, restore func()) {
	cur := debug.SetMemoryLimit(-1)
	if v := getenv("GOMEMLIMIT"); v != "" {
		if cur == math.MaxInt64 {
			return fmt.Sprintf("none (GOMEMLIMIT=%s)", v), func() {}
		}
		return fmt.Sprintf("%d MiB (GOMEMLIMIT=%s)", cur>>20, v), func() {}
	}
	if cur != math.MaxInt64 {
		// Set by whoever runs the command in-process (a test).
		return fmt.Sprintf("%d MiB (set before the command ran)", cur>>20), func() {}
	}
	limit, ok := cgroup()
	if !ok {
		return "none (no GOMEMLIMIT, no cgroup memory limit)", func() {}
	}
	l := int64(float64(limit) * cgroupShare)
	debug.SetMemoryLimit(l)
	return fmt.Sprintf("%d MiB (%.0f%% of the cgroup's %d MiB; GOMEMLIMIT not set)", l>>20, cgroupShare*100, limit>>20),
		func() { debug.SetMemoryLimit(cur) }
}

// postureAttrs adds the command's process-wide settings (the memory
// limit, the GC pacing) to the server's posture line, the one record
// that says how the server runs.
type postureAttrs struct {
	slog.Handler
	attrs []slog.Attr
}

// postureMessage is the posture line's message (server.Server logs it once
// it listens).
const postureMessage = "raxol-ssh serving"

func (h postureAttrs) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == postureMessage {
		r = r.Clone()
		r.AddAttrs(h.attrs...)
	}
	return h.Handler.Handle(ctx, r)
}

func (h postureAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return postureAttrs{Handler: h.Handler.WithAttrs(as), attrs: h.attrs}
}

func (h postureAttrs) WithGroup(name string) slog.Handler {
	return postureAttrs{Handler: h.Handler.WithGroup(name), attrs: h.attrs}
}

// describePacing is the posture line's word on the GC pacer.
func describePacing(headroomMiB int) string {
	switch {
	case headroomMiB == 0:
		return "off (--gc-headroom-mib 0): Go's own pacing"
	case headroomMiB > 0:
		return fmt.Sprintf("collections about %s apart, heap at most Go's own goal + %d MiB", gcpace.DefaultInterval, headroomMiB)
	}
	return fmt.Sprintf("collections about %s apart, heap at most Go's own goal + %d× the live heap (least over %s), %d to %d MiB",
		gcpace.DefaultInterval, gcpace.LiveFactor, gcpace.HeadroomWindow, gcpace.MinDefaultHeadroom>>20, gcpace.MemoryBound()>>20)
}
