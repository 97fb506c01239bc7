package teaapp

import (
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

// BlinkingCursors lets the text inputs' cursors blink as the program set
// them. By default they are made static: a blinking cursor folds a
// message and draws a frame for every terminal twice a second, in every
// idle session.
func BlinkingCursors() Option { return func(c *config) { c.host.blink = true } }

// staticCursors turns off the blinking of every textinput's and
// textarea's cursor in m (through their public styles), unless the app
// asked for blinking ones. It returns the next model.
func staticCursors(m tea.Model, cfg *config) tea.Model {
	if cfg.host.blink {
		return m
	}
	for _, f := range discover(m, cfg) {
		if f.Kind != "textinput" && f.Kind != "textarea" {
			continue
		}
		next, err := setComponent(m, f, func(ptr any) error {
			switch c := ptr.(type) {
			case *textinput.Model:
				if st := c.Styles(); st.Cursor.Blink {
					st.Cursor.Blink = false
					c.SetStyles(st)
				}
			case *textarea.Model:
				if st := c.Styles(); st.Cursor.Blink {
					st.Cursor.Blink = false
					c.SetStyles(st)
				}
			}
			return nil
		})
		if err == nil {
			m = next
		}
	}
	return m
}
