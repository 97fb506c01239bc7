package ui

import tea "charm.land/bubbletea/v2"

// This file holds how the widgets read key presses: activation and the
// navigation keys of the lists, tables and trees.

// isActivate reports whether ev presses a control: Enter, Space or a click.
func isActivate(ev Event) bool {
	switch ev := ev.(type) {
	case tea.KeyPressMsg:
		s := ev.String()
		return s == "enter" || s == "space"
	case ClickEvent:
		return true
	}
	return false
}

// keyName returns the String form of a key press, or "" for other events.
func keyName(ev Event) string {
	if k, ok := ev.(tea.KeyPressMsg); ok {
		return k.String()
	}
	return ""
}

// moveRow is the highlighted row after a navigation key among n rows: up,
// down, pgup and pgdown (by page), home, end. ok is false for any other
// key. The caller clamps the row.
func moveRow(key string, row, n, page int) (int, bool) {
	switch key {
	case "up":
		return row - 1, true
	case "down":
		return row + 1, true
	case "pgup":
		return dwSatAdd(row, -page), true
	case "pgdown":
		return dwSatAdd(row, page), true
	case "home":
		return 0, true
	case "end":
		return n - 1, true
	}
	return row, false
}

// vimKey maps k and j, which lists and tables also take, to up and down.
func vimKey(key string) string {
	switch key {
	case "k":
		return "up"
	case "j":
		return "down"
	}
	return key
}
