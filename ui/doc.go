// Package ui is the component tree: layout nodes, the sixteen built-in
// widgets, the typed messages they send, and terminal rendering.
//
// What flows in: an app's View() returns a tree of [Node] values; a terminal
// projection hands key presses, pastes and mouse clicks ([Event]) to the
// focused [Widget] together with that terminal's [LocalState].
//
// What flows out: typed app messages (for example [TextInputChanged]) that
// the session's dispatcher folds into the app model, and rendered text
// ([Render]) with the screen rectangle of every widget for mouse hit tests.
//
// The tree is plain data. Values that matter to the app (text, selection,
// checked state, scroll offset) live in the app model and are copied into
// the tree by View; purely local terminal state (a text cursor, a
// highlighted row) lives in a [LocalState] owned by each terminal.
//
// App authors add their own widget types by implementing [Widget]; layout,
// focus, rendering and hit testing treat them exactly like built-in ones.
//
// Package ui imports nothing else of this module.
package ui
