package mcpbridge_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/raxol-ssh/raxol-ssh/internal/safetext"
	"github.com/raxol-ssh/raxol-ssh/mcpbridge"
)

// Clean removes every default-ignorable code point, assigned or reserved,
// as the terminal-side cleaning does.
func TestCleanRemovesDefaultIgnorables(t *testing.T) {
	for _, r := range []rune{
		0x034F, 0x061C, 0x180F, 0x2065, 0x206A, 0xFFF0, 0xFFF8, 0x1BCA0, 0x1D173, 0x1D17A,
		0xE0000, 0xE0080, 0xE0100, 0xE01EF, 0xE01F0, 0xE0FFF, 0xFDD0, 0xFFFF,
	} {
		in := "a" + string(r) + "b"
		if got := mcpbridge.Clean(in); got != "ab" {
			t.Errorf("Clean(%q) (%U) = %q, want %q", in, r, got, "ab")
		}
	}
}

// Clean keeps exactly the runes safetext.Classify keeps.
func TestCleanFollowsTheSharedClassification(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := rapid.Rune().Draw(t, "r")
		kept := mcpbridge.Clean(string(r)) == string(r)
		if want := safetext.Classify(r) == safetext.Keep; kept != want {
			t.Fatalf("Clean(%U) kept=%v, Classify says keep=%v", r, kept, want)
		}
	})
}
