// Package lens is the focus lens: it chooses which of a session's MCP tools
// are advertised in tools/list, following the human's attention.
//
// A tree of 50 widgets derives 100+ tools ("<app>.<widget_id>.<action>"),
// too many for a model to reason about. The lens cuts them to
// [DefaultMaxTools] (about 15), putting first what a human looking at the
// same screen would be about to use.
//
// # What flows in and out
//
//	tools (derivation order) ─┐
//	Input{Mode, MaxTools,     ├─▶ Select ─▶ tools to advertise, in order ─▶ Names ─▶ SameSet(old, new)?
//	  Tree, Focused, Hover,   │                                                        │
//	  Recent, Modal}         ─┘                                   false: send notifications/tools/list_changed
//
// In: every [Tool] the session could offer, in derivation order (tree order,
// each widget's tools in its own order), with session tools (those with no
// widget, such as "raxol_screenshot" or "discover_tools") anywhere among
// them; and an [Input] describing the screen: the widget ids in tree order,
// the focused and hovered widgets, the widgets recently acted on, and the
// open modal, if any.
//
// Out: a new slice of at most Input.MaxTools tools, chosen from the input and
// never containing one name twice. [Names] turns it into the names that
// tools/list carries, and [SameSet] tells the caller whether the advertised
// set changed, which is when notifications/tools/list_changed must go out.
//
// # Rules
//
//   - Session tools are always advertised, first, in their input order, and
//     count toward MaxTools. If there are more than MaxTools of them, only
//     the first MaxTools are returned.
//   - Modal shadowing: while a modal is open (Input.Modal non-nil), a widget
//     tool of a widget outside the modal is never advertised, in any mode.
//   - [ModeFocused] orders widgets by attention: the focused widget, the
//     hovered one, the recently used ones (most recent first), the focused
//     widget's tree neighbours by distance in Tree positions (at each
//     distance, the one after ahead of the one before; neighbours without
//     tools are skipped), then every other widget in tree order, then
//     widgets missing from the tree in input order. A widget's tools stay
//     together, in their input order.
//   - [ModeHover] is the same with the hovered widget ahead of the focused one.
//   - [ModeAll] keeps the input order, with no attention ordering, but is
//     still shadowed and still cut to MaxTools.
//   - A tool name seen twice keeps its first occurrence only.
//
// The order matters: it is the order of the session's tools/list, where
// the bridge also marks the focused widget's tools with _meta "focused".
//
// Select is pure and deterministic: it starts no goroutines, touches no
// globals, does not modify its arguments, and gives the same output for the
// same input. It is safe to call from any goroutine.
//
// This fills two gaps of the Elixir original (raxol's FocusLens): there the
// lens was never applied to tools/list, and it had neither modal shadowing
// nor recency.
package lens
