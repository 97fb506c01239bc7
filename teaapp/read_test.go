package teaapp

import (
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// bytesPer is the heap allocated per call of fn, over n calls.
func bytesPer(n int, fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for range n {
		fn()
	}
	runtime.ReadMemStats(&b)
	return (b.TotalAlloc - a.TotalAlloc) / uint64(n)
}

// A value model's components are read where the model holds them: no copy
// of the model (7.8 KB here) nor of the component (a textinput.Model is
// 7.8 KB too) per read, and what is read is the model's own state, which a
// change (setComponent, on a copy) leaves as it was.
func TestComponentsReadWithoutCopies(t *testing.T) {
	ti := textinput.New()
	ti.SetValue("hi")
	var m tea.Model = benchProgram{search: ti}
	comps := discover(m, &config{})
	if len(comps) != 1 || comps[0].Name != "search" {
		t.Fatalf("discover: %+v", comps)
	}
	c, err := componentRef(m, comps[0])
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.(*textinput.Model)
	if !ok || p.Value() != "hi" {
		t.Fatalf("componentRef: %T %v", c, c)
	}
	if n := bytesPer(200, func() { _, _ = componentRef(m, comps[0]) }); n > 512 {
		t.Errorf("componentRef allocates %d bytes a read: a copy", n)
	}
	if n := bytesPer(200, func() { _ = discover(m, &config{}) }); n > 2048 {
		t.Errorf("discover allocates %d bytes a walk: a copy of the model", n)
	}
	next, err := setComponent(m, comps[0], func(ptr any) error { ptr.(*textinput.Model).SetValue("changed"); return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := m.(benchProgram).search.Value(); got != "hi" || p.Value() != "hi" {
		t.Errorf("the model read changed with its copy: %q, read %q", got, p.Value())
	}
	if got := next.(benchProgram).search.Value(); got != "changed" {
		t.Errorf("the changed copy holds %q", got)
	}
}

// What discover finds follows from a model's type alone only when no
// pointer, interface or slice on the way may hold a component: only then
// does the host keep it for the session.
func TestDiscoverStaticOnlyForFixedLayouts(t *testing.T) {
	type withSlice struct{ inputs []textinput.Model }
	type withPointer struct{ in *textinput.Model }
	type withChild struct{ child tea.Model }
	type nested struct {
		b     benchProgram
		pair  [2]textinput.Model
		count int
	}
	ti := textinput.New()
	cases := []struct {
		name   string
		m      tea.Model
		static bool
		n      int
	}{
		{"struct", benchProgram{search: ti}, true, 1},
		{"pointer model", &benchProgram{search: ti}, true, 1},
		{"nested structs and an array", wrap[nested]{nested{b: benchProgram{search: ti}}}, true, 3},
		{"slice", wrap[withSlice]{withSlice{inputs: []textinput.Model{ti}}}, false, 1},
		{"empty slice", wrap[withSlice]{withSlice{}}, false, 0},
		{"pointer", wrap[withPointer]{withPointer{in: &ti}}, false, 1},
		{"nil pointer", wrap[withPointer]{withPointer{}}, false, 0},
		{"interface", wrap[withChild]{withChild{child: benchProgram{search: ti}}}, false, 1},
	}
	for _, c := range cases {
		comps, static := discoverStatic(c.m, &config{})
		if static != c.static || len(comps) != c.n {
			t.Errorf("%s: static %v with %d components, want %v with %d", c.name, static, len(comps), c.static, c.n)
		}
	}
}

// wrap is a program around a value of type T: discover looks into it.
type wrap[T any] struct{ v T }

func (w wrap[T]) Init() tea.Cmd                       { return nil }
func (w wrap[T]) Update(tea.Msg) (tea.Model, tea.Cmd) { return w, nil }
func (w wrap[T]) View() tea.View                      { return tea.NewView("") }

// A view split again takes the lines that did not change from the last
// split and cleans the others, the same as a split from nothing.
func TestSplitViewTakesUnchangedLines(t *testing.T) {
	a := "title\n\x1b[1mbold\x1b[0m line\x1b]0;t\x07\nsame \x1b[31mred\x1b[0m\r\nlast\tcol"
	b := "title\n\x1b[1mbolder\x1b[0m line\nsame \x1b[31mred\x1b[0m\r\nlast\tcol\nnew"
	prev := splitView(a, nil)
	got := splitView(b, &prev)
	want := splitView(b, nil)
	if !slices.Equal(got.lines, want.lines) || !slices.Equal(got.widths, want.widths) || !slices.Equal(got.plain, want.plain) {
		t.Fatalf("split after a:\n%q %v %q\nfrom nothing:\n%q %v %q", got.lines, got.widths, got.plain, want.lines, want.widths, want.plain)
	}
	if got.lines[2] != "same \x1b[31mred\x1b[0m" || got.plain[2] != "same red" || got.plain[1] != "bolder line" || got.lines[3] != "last    col" {
		t.Errorf("lines %q plain %q", got.lines, got.plain)
	}
	if unsafe.StringData(got.plain[2]) != unsafe.StringData(prev.plain[2]) {
		t.Errorf("the unchanged styled line was cleaned again")
	}
	if got.text() != "title\nbolder line\nsame red\nlast    col\nnew" {
		t.Errorf("text %q", got.text())
	}
}

// cleanParts gives, with the clean line, what ansi.Strip and
// ansi.StringWidth give of it, for ASCII and other text alike.
func TestCleanPartsAgreesWithStripAndWidth(t *testing.T) {
	for _, l := range []string{
		"plain", "", "\x1b[1mbold\x1b[0m and \x1b[38;2;1;2;3mtrue\x1b[m",
		"tab\there\tand\x1b[1m\tbold", "\x1b]8;;https://x.test\x1b\\link\x1b]8;;\x1b\\ after",
		"wide 漢字 and \x1b[31m😀\x1b[0m", "e\u0301 combining", "👨\x01\u200d👩 joined across a control",
		"a\x1b[2Jb\x1b[10;10Hc\x1b]52;c;eA==\x07d", "unterminated \x1b[31", "bidi \u202eevil\u202c",
		"flags 🇫🇷\x1b[1m🇩🇪", "ctrl\x00\x7f chars", "🇫\x1b[2J🇷 joined once cleaned", "\u1100\x01\u1161 jamo joined",
	} {
		clean, plain, width := cleanParts(l)
		if clean != cleanLine(l) {
			t.Errorf("%q: clean %q, cleanLine %q", l, clean, cleanLine(l))
		}
		if want := ansi.Strip(clean); plain != want {
			t.Errorf("%q: plain %q, ansi.Strip %q", l, plain, want)
		}
		if want := ansi.StringWidth(clean); width != want {
			t.Errorf("%q: width %d, ansi.StringWidth %d", l, width, want)
		}
	}
}

// A change to a value model's component copies the model once: the
// changed copy is the next model, not copied again into an interface.
func TestSetComponentCopiesOnce(t *testing.T) {
	var m tea.Model = benchProgram{search: textinput.New()}
	comps := discover(m, &config{})
	set := func(ptr any) error { ptr.(*textinput.Model).SetValue("x"); return nil }
	n := bytesPer(200, func() { _, _ = setComponent(m, comps[0], set) })
	if size := uint64(unsafe.Sizeof(benchProgram{})); n > size+size/2 {
		t.Errorf("setComponent allocates %d bytes, the model is %d: copied more than once", n, size)
	}
}
