// Package testkit holds what several packages' tests share: a log writer
// that sends a server's logs to t.Log while a test runs, a buffer safe for
// concurrent writers, HTTP round trippers that add a header (a bearer
// token), Term, a human's SSH client that runs one command in a PTY
// and reads its screen through a terminal emulator, Eventually, the one
// way tests wait for a condition, Goroutines, which counts the process's
// goroutines running a given function, SSEClient, a hand-written MCP
// client over SSE that ignores the server's pings unless told to answer
// (as mcp-go's does), and PipeServer, an HTTP server on
// in-memory connections for tests that run in a testing/synctest bubble
// (virtual time: a timeout costs nothing, and no sleep guesses how long
// "long enough" is).
//
// In: a testing.TB, an SSH address and a command. Out: screens, stderr and
// exit, and test failures naming what was awaited. It is imported only by
// tests and by mcptest.
package testkit
