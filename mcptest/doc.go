// Package mcptest drives an app through its MCP endpoint in tests, the
// way an agent does.
//
// [Start] serves the app with a real [server.Server] (SSH and HTTP on
// loopback ports, a temporary data directory), starts a headless session
// and connects a go-sdk MCP client to that session's /sessions/<id>/mcp
// endpoint (or /sse with [WithSSE]) with the session's bearer token. Every
// call then travels the path an agent's does: HTTP, bearer authentication,
// the session's MCP server and its middleware, the dispatcher. Nothing is
// called directly, so what a test exercises is what an agent hits.
//
// Actions and assertions chain:
//
//	mcptest.Start(t, app).
//		TypeInto("search", "bill").
//		Click("search_btn").
//		AssertComponent("services", func(st map[string]any) bool {
//			return len(st["rows"].([]any)) == 1
//		}).
//		Select("services", 0).
//		Click("restart").
//		AssertComponent("confirm_restart", func(st map[string]any) bool { return st["visible"] == true })
//
// An action ([Session.TypeInto], [Session.Click], [Session.Select],
// [Session.Toggle], [Session.Clear], [Session.CallTool],
// [Session.PressKey]) calls the derived tool <app>.<widget id>.<action>
// and stops the test with Fatalf when the call fails, either as a
// protocol error or as a tool error result; the message names the tool and
// its arguments, the error, and every tool the session offers now (the
// focus lens's tools/list plus discover_tools), since a wrong widget id or
// a widget missing from the current view is the usual cause. Tool
// results answer after the app has folded the change, so a model,
// component or screen assertion right after an action sees it; there is
// no settle delay. The tool list is the exception: the session's MCP
// server re-derives it asynchronously after each change, so
// [Session.AssertToolAvailable], [Session.RefuteToolAvailable] and
// [Session.Tools] first wait until the server has caught up with the
// model's latest version (as the raxol://session/context resource shows).
//
// Assertions ([Session.AssertComponent], [Session.AssertModel],
// [Session.AssertScreen], [Session.AssertToolAvailable],
// [Session.RefuteToolAvailable]) report with Errorf and let the test go
// on. AssertComponent reads the raxol://session/tree resource and
// AssertScreen calls raxol_screenshot, both over MCP; AssertModel reads the
// dispatcher's latest model directly, for facts no projection shows.
//
// A headless session has no terminal, so raxol_send_key
// ([Session.PressKey]) fails there with no_terminal for an app of this
// module's widgets (it types into a human's terminal: drive widgets with
// their tools instead); a hosted Bubble Tea program (package teaapp) takes
// the keys itself, terminal or not.
//
// Every MCP call is bounded by a timeout (10s by default,
// [WithCallTimeout]). Everything is torn down by t.Cleanup, in order: the
// client is closed, the session ended, the server shut down.
//
// A Session is not safe for concurrent use: drive it from the test's own
// goroutine (or one goroutine at a time). Fatalf stops only the goroutine
// that calls it, which is another reason to keep to the test goroutine.
package mcptest
