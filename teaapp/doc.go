// Package teaapp serves an existing Bubble Tea v2 program over SSH and MCP
// without changing it: replace
//
//	tea.NewProgram(initialModel()).Run()
//
// with
//
//	server.ListenAndServe(ctx, teaapp.New("dinner", func(ui.Identity) tea.Model { return initialModel() }), server.Options{})
//
// # What flows in and out
//
// In: a constructor of the program's tea.Model and options. New returns a
// server.App whose model (per session) wraps the program's: the session's
// dispatcher folds into it the terminals' keys, the agents' tool calls and
// keys, and what the program's own commands return, one at a time, so the
// human and the agent always see one state. Messages a tea.Program would
// answer itself are answered here: window size and colour requests,
// printed lines (shown above the view, and returned to the agent whose
// call printed them), tea.Exec (its callback gets ErrExec); tea.Quit ends
// the session.
//
// Out: the tree the session draws and derives tools from: a root that
// draws the program's view (ui.Hosted: terminals pass it every key they do
// not keep for the session, Tab and ctrl+c included) and, as its children,
// one widget per bubbles component the screen shows (textinput, textarea,
// list, table, viewport, paginator, filepicker, progress, spinner, help),
// with typed tools named <app>.<component>.<action>, the component named by
// its field path in snake case.
//
// # Sizes
//
// The program is drawn at one size: the owner's window (its app area) by
// default, the smallest window with SmallestWindow, Size (80x24 unless
// set) with no terminal. It gets a tea.WindowSizeMsg when that size
// changes, never per terminal; a terminal of another size crops or pads
// it, and says so on its last row.
//
// # Failures
//
// A panic in View keeps the last good screen and the session goes on. A
// panic in Update answers the call update_failed and ends the session with
// a clear message: a Bubble Tea model's copies share slices and pointers,
// so the model before the failed input may be changed as well and going on
// from it is not safe. RollbackSafe vouches for a model whose copies share
// nothing: the session then goes on from the model before the input.
//
// The program's view is outside text: only SGR styling and OSC 8
// hyperlinks reach a terminal; every other escape sequence and control
// character is removed, and nothing is drawn outside the program's
// rectangle.
//
// # Files
//
// teaapp.go holds New and the options of the whole app; host.go the model
// the dispatcher folds (sizes, commands, agent actions); screen.go the
// tree's root and the cleaning of the view; contract.go the types between
// the host and the components; components*.go the bubbles components.
package teaapp
