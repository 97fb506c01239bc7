package mcptest

import (
	"testing"
	"time"
)

// SetToolSettle makes tool assertions wait d for their answer to settle
// until t ends, instead of 500ms: a test of an assertion that fails need
// not wait the whole grace period out.
func SetToolSettle(t *testing.T, d time.Duration) {
	old := toolSettle
	toolSettle = d
	t.Cleanup(func() { toolSettle = old })
}
