package metrics

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

var ourMetrics = []string{
	"raxol_sessions_open",
	"raxol_ssh_connections_total",
	"raxol_ssh_auth_failures_total",
	"raxol_ssh_limit_rejections_total",
	"raxol_dispatcher_fold_duration_seconds",
	"raxol_dispatcher_update_failures_total",
	"raxol_dispatcher_view_failures_total",
	"raxol_terminal_frames_total",
	"raxol_terminal_bytes_written_total",
	"raxol_app_panics_total",
}

func TestNewRegistersEverything(t *testing.T) {
	m := New()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	got := map[string]int{}
	for _, mf := range mfs {
		got[mf.GetName()] = len(mf.GetMetric())
	}
	for _, name := range ourMetrics {
		if _, ok := got[name]; !ok {
			t.Errorf("%s not registered", name)
		}
	}
	if got["raxol_ssh_connections_total"] != len(Outcomes()) {
		t.Errorf("connections series = %d, want %d (one per outcome, pre-initialized)",
			got["raxol_ssh_connections_total"], len(Outcomes()))
	}
	if got["raxol_ssh_limit_rejections_total"] != len(Limits()) {
		t.Errorf("limit series = %d, want %d", got["raxol_ssh_limit_rejections_total"], len(Limits()))
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := got[name]; !ok {
			t.Errorf("collector metric %s missing", name)
		}
	}

	problems, err := testutil.GatherAndLint(m.Registry)
	if err != nil {
		t.Fatalf("GatherAndLint: %v", err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

func TestNoIdentifyingLabels(t *testing.T) {
	m := New()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{"outcome": true, "limit": true, "reason": true, "seam": true, "decision": true, "hook": true} // each from a fixed set of values
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "raxol_") {
			continue
		}
		for _, metric := range mf.GetMetric() {
			for _, lp := range metric.GetLabel() {
				if !allowed[lp.GetName()] {
					t.Errorf("%s has label %q", mf.GetName(), lp.GetName())
				}
			}
		}
	}
}

func TestConnectionOutcomes(t *testing.T) {
	m := New()
	m.Connection(OutcomeOK)
	m.Connection(OutcomeOK)
	m.Connection(OutcomeIdleTimeout)
	m.Connection("weird")
	m.Connection("")
	for outcome, want := range map[string]float64{
		OutcomeOK: 2, OutcomeIdleTimeout: 1, OutcomeOther: 2, OutcomeError: 0,
	} {
		if got := testutil.ToFloat64(m.Connections.WithLabelValues(outcome)); got != want {
			t.Errorf("connections{outcome=%q} = %v, want %v", outcome, got, want)
		}
	}
	if n := testutil.CollectAndCount(m.Connections); n != len(Outcomes()) {
		t.Errorf("connections series = %d, want %d: unknown outcomes must not add series", n, len(Outcomes()))
	}
}

func TestLimitRejected(t *testing.T) {
	m := New()
	m.LimitRejected(LimitMaxPerIP)
	m.LimitRejected("203.0.113.7") // an address must never become a label
	if got := testutil.ToFloat64(m.LimitRejections.WithLabelValues(LimitMaxPerIP)); got != 1 {
		t.Errorf("max_per_ip = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.LimitRejections.WithLabelValues(LimitOther)); got != 1 {
		t.Errorf("other = %v, want 1", got)
	}
	if n := testutil.CollectAndCount(m.LimitRejections); n != len(Limits()) {
		t.Errorf("limit series = %d, want %d", n, len(Limits()))
	}
}

func TestAppPanic(t *testing.T) {
	var nilM *Metrics
	nilM.AppPanic(HookRender) // no panic
	m := New()
	m.AppPanic(HookRender)
	m.AppPanic("not-a-hook")
	if got := testutil.ToFloat64(m.AppPanics.WithLabelValues(HookRender)); got != 1 {
		t.Errorf("render = %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.AppPanics.WithLabelValues(HookOther)); got != 1 {
		t.Errorf("other = %v, want 1 (unknown hooks count there)", got)
	}
	if got := testutil.CollectAndCount(m.AppPanics); got != len(AppHooks()) {
		t.Errorf("%d series, want one per hook (%d), pre-initialized", got, len(AppHooks()))
	}
}

func TestLabelSetsAreCopies(t *testing.T) {
	o := Outcomes()
	o[0] = "mutated"
	if Outcomes()[0] != OutcomeOK {
		t.Error("Outcomes() exposes the package's slice")
	}
	l := Limits()
	l[0] = "mutated"
	if Limits()[0] != LimitMaxConnections {
		t.Error("Limits() exposes the package's slice")
	}
}

func TestSimpleMethods(t *testing.T) {
	m := New()
	m.SessionOpened()
	m.SessionOpened()
	m.SessionClosed()
	m.AuthFailed()
	m.UpdateFailed()
	m.ViewFailed()
	m.ObserveFold(3 * time.Millisecond)
	checks := []struct {
		name string
		got  float64
		want float64
	}{
		{"sessions_open", testutil.ToFloat64(m.SessionsOpen), 1},
		{"auth_failures", testutil.ToFloat64(m.AuthFailures), 1},
		{"update_failures", testutil.ToFloat64(m.UpdateFailures), 1},
		{"view_failures", testutil.ToFloat64(m.ViewFailures), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	const want = `
# HELP raxol_dispatcher_fold_duration_seconds Time to fold one input into a session's model.
# TYPE raxol_dispatcher_fold_duration_seconds histogram
raxol_dispatcher_fold_duration_seconds_bucket{le="1e-06"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="2.5e-06"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="5e-06"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="1e-05"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="2.5e-05"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="5e-05"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="0.0001"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="0.00025"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="0.0005"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="0.001"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="0.0025"} 0
raxol_dispatcher_fold_duration_seconds_bucket{le="0.005"} 1
raxol_dispatcher_fold_duration_seconds_bucket{le="0.01"} 1
raxol_dispatcher_fold_duration_seconds_bucket{le="0.025"} 1
raxol_dispatcher_fold_duration_seconds_bucket{le="0.05"} 1
raxol_dispatcher_fold_duration_seconds_bucket{le="0.1"} 1
raxol_dispatcher_fold_duration_seconds_bucket{le="0.25"} 1
raxol_dispatcher_fold_duration_seconds_bucket{le="0.5"} 1
raxol_dispatcher_fold_duration_seconds_bucket{le="1"} 1
raxol_dispatcher_fold_duration_seconds_bucket{le="+Inf"} 1
raxol_dispatcher_fold_duration_seconds_sum 0.003
raxol_dispatcher_fold_duration_seconds_count 1
`
	if err := testutil.GatherAndCompare(m.Registry, strings.NewReader(want), "raxol_dispatcher_fold_duration_seconds"); err != nil {
		t.Error(err)
	}
}

func TestCountingWriter(t *testing.T) {
	m := New()
	var buf bytes.Buffer
	w := m.CountingWriter(&buf)
	for _, s := range []string{"hello", "", "world!"} {
		n, err := io.WriteString(w, s)
		if err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if buf.String() != "helloworld!" {
		t.Errorf("passed through %q, want %q", buf.String(), "helloworld!")
	}
	if got := testutil.ToFloat64(m.FramesWritten); got != 2 {
		t.Errorf("frames = %v, want 2 (empty writes are not frames)", got)
	}
	if got := testutil.ToFloat64(m.BytesWritten); got != 11 {
		t.Errorf("bytes = %v, want 11", got)
	}
}

type shortWriter struct{ err error }

func (s shortWriter) Write(p []byte) (int, error) { return len(p) / 2, s.err }

func TestCountingWriterPartialWrite(t *testing.T) {
	m := New()
	boom := errors.New("boom")
	n, err := m.CountingWriter(shortWriter{boom}).Write([]byte("12345678"))
	if n != 4 || !errors.Is(err, boom) {
		t.Fatalf("Write = %d, %v; want 4, boom", n, err)
	}
	if got := testutil.ToFloat64(m.BytesWritten); got != 4 {
		t.Errorf("bytes = %v, want the 4 actually written", got)
	}
	if got := testutil.ToFloat64(m.FramesWritten); got != 1 {
		t.Errorf("frames = %v, want 1", got)
	}
}

func TestCountingWriterConcurrent(t *testing.T) {
	m := New()
	w := m.CountingWriter(io.Discard)
	const goroutines, writes = 8, 200
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range writes {
				_, _ = w.Write([]byte("abc"))
			}
		})
	}
	wg.Wait()
	if got := testutil.ToFloat64(m.FramesWritten); got != goroutines*writes {
		t.Errorf("frames = %v, want %d", got, goroutines*writes)
	}
	if got := testutil.ToFloat64(m.BytesWritten); got != 3*goroutines*writes {
		t.Errorf("bytes = %v, want %d", got, 3*goroutines*writes)
	}
}

func TestHandler(t *testing.T) {
	m := New()
	m.SessionOpened()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	client := srv.Client()
	defer client.CloseIdleConnections()

	get := func(accept string) (string, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		return resp.Header.Get("Content-Type"), string(body)
	}

	_, body := get("")
	for _, want := range []string{"raxol_sessions_open 1", `raxol_ssh_connections_total{outcome="no_pty"} 0`, "go_goroutines"} {
		if !strings.Contains(body, want) {
			t.Errorf("text exposition lacks %q", want)
		}
	}

	ct, body := get("application/openmetrics-text; version=1.0.0; charset=utf-8")
	if !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Errorf("Content-Type = %q, want OpenMetrics", ct)
	}
	if !strings.Contains(body, "raxol_sessions_open") || !strings.HasSuffix(body, "# EOF\n") {
		t.Errorf("OpenMetrics body malformed:\n%s", body)
	}
}

func TestInstancesAreIndependent(t *testing.T) {
	a, b := New(), New()
	a.Connection(OutcomeOK)
	a.SessionOpened()
	if got := testutil.ToFloat64(b.Connections.WithLabelValues(OutcomeOK)); got != 0 {
		t.Errorf("second instance sees %v connections, want 0", got)
	}
	if got := testutil.ToFloat64(b.SessionsOpen); got != 0 {
		t.Errorf("second instance sees %v sessions, want 0", got)
	}
	if a.Registry == b.Registry {
		t.Error("instances share a registry")
	}
}

func TestNilMetricsIsNoOp(t *testing.T) {
	var m *Metrics
	m.Connection(OutcomeOK)
	m.LimitRejected(LimitMaxConnections)
	m.SessionOpened()
	m.SessionClosed()
	m.AuthFailed()
	m.ObserveFold(time.Second)
	m.UpdateFailed()
	m.ViewFailed()

	var buf bytes.Buffer
	w := m.CountingWriter(&buf)
	if w != io.Writer(&buf) {
		t.Error("nil CountingWriter did not return its argument")
	}

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Handler status = %d, want 404", rec.Code)
	}
}
