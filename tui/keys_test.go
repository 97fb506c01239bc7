package tui

import "testing"

// TestEveryBindingHasOneKey: each thing the terminal does on a key has
// exactly one key in the bindings table, the one its hints on screen name.
func TestEveryBindingHasOneKey(t *testing.T) {
	seen := map[binding]string{}
	for k, b := range bindings {
		if b == bindNone {
			t.Fatalf("key %q is bound to nothing", k)
		}
		if other, dup := seen[b]; dup {
			t.Fatalf("binding %d has two keys, %q and %q: the hints name only one", b, other, k)
		}
		seen[b] = k
	}
	for b := bindQuit; b <= bindEscape; b++ {
		if _, ok := seen[b]; !ok {
			t.Fatalf("binding %d has no key", b)
		}
		if got := keyFor(b); got != seen[b] {
			t.Fatalf("keyFor(%d) = %q, want %q", b, got, seen[b])
		}
	}
}
