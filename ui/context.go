package ui

import "charm.land/lipgloss/v2"

// This file holds what the widgets' HandleEvent and Render use to fill in
// a nil LocalState or a hand-built RenderContext, and the style of a
// widget's main part.

// stateOrScratch returns st, or a throwaway state when st is nil.
func stateOrScratch(st *LocalState) *LocalState {
	if st == nil {
		return &LocalState{}
	}
	return st
}

// localOf returns rc.Local, or a zero state when it is nil.
func localOf(rc RenderContext) *LocalState {
	if rc.Local == nil {
		return &LocalState{}
	}
	return rc.Local
}

// dwContext returns the theme, local state and width to draw with, filling
// in what a hand-built RenderContext may lack.
func dwContext(rc RenderContext) (*Theme, *LocalState, int) {
	th := rc.Theme
	if th == nil {
		th = DefaultTheme()
	}
	st := rc.Local
	if st == nil {
		st = &LocalState{}
	}
	return th, st, max(rc.Width, 1)
}

// controlStyle returns the style of a widget's main part: Disabled,
// Focused or Normal.
func controlStyle(rc RenderContext, disabled bool) lipgloss.Style {
	switch {
	case disabled:
		return rc.Theme.Disabled
	case rc.Focused:
		return rc.Theme.Focused
	default:
		return rc.Theme.Normal
	}
}
