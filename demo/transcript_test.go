package demo_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPTranscript drives the demo through a real server and the go-sdk
// MCP client (package mcptest) and records what an agent sees in
// testdata/mcp.txtar: tools/list (each tool's name, description and input
// schema) and a few calls with their results, accepted and refused. The
// test compares the transcript section by section; go test ./demo/
// -update rewrites it. The session id and token, and any timestamp, are
// masked.
func TestMCPTranscript(t *testing.T) {
	s := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs := s.Client()

	mask := func(text string) string {
		se, ok := s.Server().Session(s.ID())
		if !ok {
			t.Fatalf("session %s is gone", s.ID())
		}
		text = strings.ReplaceAll(text, s.ID(), "<session-id>")
		text = strings.ReplaceAll(text, se.Token(), "<token>")
		return timestamps.ReplaceAllString(text, "<time>")
	}
	indent := func(v any) string {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		return mask(string(b)) + "\n"
	}

	ar := &archive{comment: "What an agent sees of the demo over MCP (go-sdk client, Streamable HTTP).\n" +
		"Written by TestMCPTranscript; rewrite with: go test ./demo/ -update\n"}
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	type tool struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		InputSchema any    `json:"inputSchema"`
	}
	var tools []tool
	for _, tl := range lr.Tools {
		tools = append(tools, tool{tl.Name, tl.Description, tl.InputSchema})
	}
	ar.add("tools/list", indent(tools))

	for i, c := range []struct {
		what string
		tool string
		args map[string]any
	}{
		{"type into the search input", "demo.search.type_into", map[string]any{"text": "bill"}},
		{"press the Search button", "demo.search_btn.click", map[string]any{}},
		{"select the first row", "demo.services.select_row", map[string]any{"index": 0}},
		{"invalid arguments: text is not a string", "demo.search.type_into", map[string]any{"text": 5}},
		{"refused: no such widget", "demo.nope.click", map[string]any{}},
		{"refused: the confirmation modal is not open", "demo.confirm_restart.confirm", map[string]any{}},
		{"refused: keys need a terminal; this session is headless", "raxol_send_key", map[string]any{"keys": []string{"enter"}}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("call %s: %v", c.tool, err)
		}
		var out any = resultText(res)
		if res.StructuredContent != nil {
			out = res.StructuredContent
		}
		ar.add(fmt.Sprintf("call %d: %s", i+1, c.tool), "# "+c.what+"\n"+indent(map[string]any{
			"arguments": c.args, "isError": res.IsError, "result": out,
		}))
	}
	// The calls did what they say: the transcript is of a working agent.
	if st := services(s.Model()); st.Filter != "bill" || st.Selected != "billing" {
		t.Errorf("after the calls: %+v", st)
	}

	file := filepath.Join("testdata", "mcp.txtar")
	got := ar.format()
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test ./demo/ -update to create it)", err)
	}
	want := parseArchive(raw)
	if want.comment != ar.comment {
		t.Errorf("%s: comment differs:\n%s", file, lineDiff(want.comment, ar.comment))
	}
	var wantNames, gotNames []string
	for _, f := range want.files {
		wantNames = append(wantNames, f.name)
	}
	for _, f := range ar.files {
		gotNames = append(gotNames, f.name)
	}
	if w, g := strings.Join(wantNames, "\n"), strings.Join(gotNames, "\n"); w != g {
		t.Errorf("%s: sections differ (go test ./demo/ -update rewrites it):\n%s", file, lineDiff(w, g))
		return
	}
	for i, f := range ar.files {
		if w := want.files[i].data; w != f.data {
			t.Errorf("%s: section %q differs (go test ./demo/ -update rewrites it):\n%s", file, f.name, lineDiff(w, f.data))
		}
	}
}

// timestamps are RFC 3339 times, as resources and results carry them.
var timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// resultText is a result's text content.
func resultText(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// archive is a txtar archive (the format of golang.org/x/tools/txtar,
// written here to need no new module): a comment, then files, each
// introduced by a line "-- name --".
type archive struct {
	comment string
	files   []archiveFile
}

type archiveFile struct{ name, data string }

func (a *archive) add(name, data string) {
	if !strings.HasSuffix(data, "\n") {
		data += "\n"
	}
	a.files = append(a.files, archiveFile{name, data})
}

func (a *archive) format() []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
	}
	return b.Bytes()
}

// parseArchive reads a txtar archive: a line "-- name --" starts a file.
func parseArchive(data []byte) *archive {
	a := &archive{}
	cur := &a.comment
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if l := strings.TrimSuffix(line, "\n"); strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) >= 6 {
			a.files = append(a.files, archiveFile{name: l[3 : len(l)-3]})
			cur = &a.files[len(a.files)-1].data
			continue
		}
		*cur += line
	}
	return a
}
