// Package safetext makes text that came from the network safe to draw in a
// terminal: an agent's client name and tool names, an SSH user name, the
// details of an approval prompt, anything an agent or a stranger chose.
//
// In: any string, valid UTF-8 or not, and a bound in runes. Out: one line
// of printable text, at most that many runes, with no ESC and no escape
// sequence (CSI, OSC, DCS, SOS, PM, APC, 7-bit or C1), no C0 or C1
// control, no newline or tab (whitespace becomes a plain space), no bidi
// override, isolate or mark, no Default_Ignorable_Code_Point (assigned or
// reserved), no private-use, surrogate or noncharacter code point, and no
// invalid UTF-8 (each bad byte becomes U+FFFD). Printable Unicode (accents,
// CJK, emoji) is kept; text cut at the bound ends in "…".
//
// [Clean] is the one function that does it; [Classify] is the character
// classification it uses, shared with the MCP bridge's sanitiser of
// schemas and descriptions. The session package applies Clean where
// outside text enters a session (attachments, the activity log, approval
// and join requests), so that every terminal and the activity resource
// read only cleaned text.
//
// It imports nothing of this module.
package safetext
