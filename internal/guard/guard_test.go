package guard

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/raxol-ssh/raxol-ssh/metrics"
)

func TestPanicsAreContainedCountedAndLoggedOncePerSite(t *testing.T) {
	var buf bytes.Buffer
	m := metrics.New()
	r := New(slog.New(slog.NewTextHandler(&buf, nil)), m)
	s := r.Session("s1")
	for range 3 {
		err := s.Do(metrics.HookRender, "w", func() { panic("boom") })
		var p *Panic
		if !errors.As(err, &p) || p.Hook != metrics.HookRender || p.Widget != "w" {
			t.Fatalf("err = %v", err)
		}
	}
	_, err := Call(r.Session("s2"), metrics.HookRender, "w", func() int { panic("boom") })
	if err == nil {
		t.Fatal("no error")
	}
	if v, err := Call(s, metrics.HookState, "w", func() int { return 7 }); v != 7 || err != nil {
		t.Fatalf("Call = %v, %v", v, err)
	}
	if got := testutil.ToFloat64(m.AppPanics.WithLabelValues(metrics.HookRender)); got != 4 {
		t.Errorf("counted %v, want 4", got)
	}
	if n := strings.Count(buf.String(), "app code panicked"); n != 2 {
		t.Errorf("logged %d times, want once per site (2):\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "guard_test.go") {
		t.Errorf("no stack in the log:\n%s", buf.String())
	}
	if strings.Contains(buf.String(), "boom") {
		t.Errorf("the panic value is in an error-level line:\n%s", buf.String())
	}
	r.Forget("s1")
	_ = s.Do(metrics.HookRender, "w", func() { panic("boom") })
	if n := strings.Count(buf.String(), "app code panicked"); n != 3 {
		t.Errorf("after Forget: logged %d times, want 3", n)
	}
}

func TestNilReporterStillContains(t *testing.T) {
	var r *Reporter
	if err := r.Session("x").Do(metrics.HookTools, "", func() { panic(1) }); err == nil {
		t.Fatal("no error")
	}
	if err := (Scope{}).Do(metrics.HookTools, "", func() {}); err != nil {
		t.Fatal(err)
	}
}
