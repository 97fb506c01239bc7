// Package termin turns the bytes a client's terminal sends into Bubble
// Tea input events: keys, mouse, focus and bracketed paste.
//
// In: the raw input of one SSH channel, written as it arrives
// ([Decoder.Write]). Out: events, in order, through the send function
// the Decoder was made with (the server passes each to its running
// tea.Program's Send, and Bubble Tea turns them into tea.KeyPressMsg,
// tea.PasteMsg and so on).
//
// It exists because Bubble Tea's own input reader builds a lookup table
// of ~150 KiB for every program it runs (ultraviolet's key table, not
// shareable from outside the library), which was two thirds of the heap
// of an idle session, and runs three goroutines per terminal. The
// Decoder uses ultraviolet's EventDecoder, the parser that reader is
// built on, and does what the reader adds on top: the escape timeout
// (a lone ESC is the Escape key once nothing follows it for 50 ms),
// bracketed paste, and dropping what is not input (replies to queries
// the server never makes, unknown sequences). What it does not do is
// the reader's table lookup for sequences the parser does not know; the
// tests compare it with ultraviolet's reader over the keys real
// terminals send, so a difference shows up there.
//
// Unlike that reader it bounds what it holds: a paste is cut at
// [MaxPaste] bytes and an unfinished sequence at [MaxPending] bytes, so
// a client that never ends one cannot grow the server's memory.
package termin
