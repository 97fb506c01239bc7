package teaapp

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"charm.land/bubbles/v2/filepicker"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/list"
	"charm.land/bubbles/v2/paginator"
	"charm.land/bubbles/v2/table"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/textinput"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
)

// This file performs agents' actions on components: through the keys a
// human would press (the component's own KeyMap), each folded by the
// program's own Update, then checked; through a documented setter only
// where keys cannot do it.

// Bounds of acting by keys.
const (
	maxPresses = 200   // key presses to move a selection; more use the setter
	maxTyped   = 10000 // runes an agent may type at once
)

// focusedComponent returns the Name of the component whose Focused() is
// true (a textinput, textarea or table), "" if none.
func focusedComponent(m tea.Model, comps []found) string {
	for _, f := range comps {
		switch f.Kind {
		case "textinput", "textarea", "table":
		default:
			continue
		}
		c, err := componentRef(m, f)
		if err != nil {
			continue
		}
		switch c := c.(type) {
		case *textinput.Model:
			if c.Focused() {
				return f.Name
			}
		case *textarea.Model:
			if c.Focused() {
				return f.Name
			}
		case *table.Model:
			if c.Focused() {
				return f.Name
			}
		}
	}
	return ""
}

// actor is one action being applied: the model as it is now, the
// component acted on, and how to fold a message.
type actor struct {
	m    tea.Model
	f    found
	step stepFunc
	opts *componentOptions
}

// get returns the component as it is in the current model: a pointer
// to it there (*textinput.Model...), to read before the next key is
// pressed (a pointer model changes in place).
func (a *actor) get() (any, error) { return componentRef(a.m, a.f) }

// press folds the key press k into the program n times.
func (a *actor) press(k tea.KeyPressMsg, n int) {
	for range n {
		a.m = a.step(a.m, k)
	}
}

// set changes the component through a documented setter (fn gets a
// pointer to it).
func (a *actor) set(fn func(ptr any) error) error {
	next, err := setComponent(a.m, a.f, fn)
	if err != nil {
		return err
	}
	a.m = next
	return nil
}

// errIgnored is the error for keys the program did not pass on.
func (a *actor) errIgnored() error {
	return fmt.Errorf("the program did not pass the keys to %s: its Update ignored them", a.f.Name)
}

// apply performs an agent action on the model, on the dispatcher
// goroutine, and returns the next model, the action's result
// (JSON-marshalable) or an error. The keys a human would press are
// folded through step (the model's own Update) and the result checked:
// keys the program ignored are an error, never a silent success. Where
// keys cannot do it (a selection more than maxPresses presses away, an
// unfocused input) a documented setter is used. Arguments out of range
// are an error with the model unchanged.
func apply(m tea.Model, comps []found, a applyMsg, step stepFunc, cfg *config) (tea.Model, any, error) {
	var f found
	ok := false
	for _, c := range comps {
		if c.Name == a.Component {
			f, ok = c, true
			break
		}
	}
	if !ok {
		return m, nil, fmt.Errorf("%s.%s: no such component in the program now", a.Component, a.Action)
	}
	var opts componentOptions
	if cfg != nil {
		opts = cfg.comps
	}
	args := a.Args
	if args == nil {
		args = map[string]any{}
	}
	for _, x := range opts.extraActions(f) {
		if x.spec.Action == a.Action {
			return applyExtra(m, x, args, step, a)
		}
	}
	ac := &actor{m: m, f: f, step: step, opts: &opts}
	var result any
	var err error
	switch f.Kind + "." + a.Action {
	case "textinput.type_into", "textarea.type_into":
		s, _ := args["text"].(string)
		if f.Kind == "textarea" {
			s = strings.ReplaceAll(s, "\r\n", "\n")
		}
		result, err = ac.typeInto(s)
	case "textinput.clear", "textarea.clear":
		result, err = ac.typeInto("")
	case "list.select":
		result, err = ac.listSelect(args, false)
	case "list.activate":
		result, err = ac.listSelect(args, true)
	case "list.filter":
		s, _ := args["text"].(string)
		result, err = ac.listFilter(s)
	case "table.select_row":
		result, err = ac.tableSelect(args, false)
	case "table.activate":
		result, err = ac.tableSelect(args, true)
	case "viewport.scroll", "viewport.scroll_by":
		result, err = ac.scroll(args, a.Action == "scroll_by")
	case "paginator.go_to_page":
		result, err = ac.goToPage(args)
	case "filepicker.open", "filepicker.select", "filepicker.back":
		result, err = ac.filepick(a.Action, args)
	default:
		err = errors.New("no such action")
	}
	if err != nil {
		return ac.m, nil, fmt.Errorf("%s.%s: %w", f.Name, a.Action, err)
	}
	return ac.m, result, nil
}

// cmdModel hands a command to the host's step: its Update, given
// runCmd, returns the model it wraps and the command, which the host
// then runs as it runs the program's own.
type cmdModel struct {
	tea.Model
	cmd tea.Cmd
}

// runCmd is the message cmdModel answers with its command.
type runCmd struct{}

// Update returns the wrapped model and the command on runCmd.
func (c cmdModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(runCmd); ok {
		return c.Model, c.cmd
	}
	return c.Model.Update(msg)
}

// applyExtra runs an action WithAction added.
func applyExtra(m tea.Model, x extraAction, args map[string]any, step stepFunc, a applyMsg) (tea.Model, any, error) {
	next, cmd, result, err := x.apply(m, args)
	if next == nil {
		next = m
	}
	if cmd != nil {
		next = step(cmdModel{Model: next, cmd: cmd}, runCmd{})
	}
	if err != nil {
		return next, nil, fmt.Errorf("%s.%s: %w", a.Component, a.Action, err)
	}
	return next, result, nil
}

// move is how an action moves a component's position (a list's selection,
// a table's cursor, a viewport's top line, a paginator's page) from cur to
// target: forward or back presses of the component's own keys, as a human
// would, or, where keys cannot (more than maxPresses, no key bound, or
// keys not allowed), set. Then it reads the component again, checks the
// position with at and returns it with how it moved. what names the
// position in the error ("the cursor is at row %d, not %d").
type move struct {
	cur, target   int
	forward, back key.Binding
	keys          bool   // keys may be used (a table only takes them focused)
	setHow        string // what "how" says when it was set
	set           func(ptr any) error
	at            func(c any) int
	what          string
}

func (a *actor) move(m move) (c any, how string, err error) {
	how = "keys"
	fwd, okF := bindingKey(m.forward)
	bk, okB := bindingKey(m.back)
	d := m.target - m.cur
	switch {
	case m.keys && d > 0 && d <= maxPresses && okF:
		a.press(fwd, d)
	case m.keys && d < 0 && -d <= maxPresses && okB:
		a.press(bk, -d)
	default:
		how = m.setHow
		if err := a.set(m.set); err != nil {
			return nil, "", err
		}
	}
	if c, err = a.get(); err != nil {
		return nil, "", err
	}
	if got := m.at(c); got != m.target {
		if got == m.cur {
			return nil, "", a.errIgnored()
		}
		return nil, "", fmt.Errorf(m.what, got, m.target)
	}
	return c, how, nil
}

// typeInto replaces an input's content with text: with keys when the
// input is focused (clear, then one key press per rune), with SetValue
// when it is not (an unfocused input ignores keys).
func (a *actor) typeInto(text string) (any, error) {
	multi := a.f.Kind == "textarea"
	if err := cleanText(text, multi); err != nil {
		return nil, err
	}
	if n := len([]rune(text)); n > maxTyped {
		return nil, fmt.Errorf("text has %d characters: at most %d can be typed at once", n, maxTyped)
	}
	c, err := a.get()
	if err != nil {
		return nil, err
	}
	before, focused, password, keys := inputState(c)
	if !focused {
		err := a.set(func(p any) error {
			switch p := p.(type) {
			case *textinput.Model:
				p.SetValue(text)
				p.CursorEnd()
			case *textarea.Model:
				p.SetValue(text)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		return a.checkValue(text, password, "set (the input is not focused, so it takes no keys)")
	}
	if before != "" {
		if err := a.clearByKeys(c, keys); err != nil {
			return nil, err
		}
	}
	for _, r := range text {
		if r == '\n' {
			k, ok := bindingKey(keys.(*textarea.KeyMap).InsertNewline)
			if !ok {
				return nil, errors.New("the textarea has no key that inserts a newline")
			}
			a.press(k, 1)
			continue
		}
		a.press(runeKey(r), 1)
	}
	c, err = a.get()
	if err != nil {
		return nil, err
	}
	after, _, _, _ := inputState(c)
	if after == before && text != before {
		return nil, a.errIgnored()
	}
	return a.checkValue(text, password, "typed")
}

// inputState reads an input's value, focus, echo mode and key map.
func inputState(c any) (value string, focused, password bool, keys any) {
	switch c := c.(type) {
	case *textinput.Model:
		return c.Value(), c.Focused(), c.EchoMode != textinput.EchoNormal, &c.KeyMap
	case *textarea.Model:
		return c.Value(), c.Focused(), false, &c.KeyMap
	}
	return "", false, false, nil
}

// clearByKeys deletes a focused input's content with its keys: line end
// and delete-before-cursor for a textinput; for a textarea, input end,
// then per line delete-before-cursor and backspace. A textarea of more
// lines than maxPresses/2 is Reset.
func (a *actor) clearByKeys(c any, keys any) error {
	switch km := keys.(type) {
	case *textinput.KeyMap:
		end, ok1 := bindingKey(km.LineEnd)
		del, ok2 := bindingKey(km.DeleteBeforeCursor)
		if !ok1 || !ok2 {
			return a.set(func(p any) error { p.(*textinput.Model).Reset(); return nil })
		}
		a.press(end, 1)
		a.press(del, 1)
	case *textarea.KeyMap:
		ta := c.(*textarea.Model)
		lines := ta.LineCount()
		end, ok1 := bindingKey(km.InputEnd)
		del, ok2 := bindingKey(km.DeleteBeforeCursor)
		back, ok3 := bindingKey(km.DeleteCharacterBackward)
		if !ok1 || !ok2 || !ok3 || lines > maxPresses/2 {
			return a.set(func(p any) error { p.(*textarea.Model).Reset(); return nil })
		}
		a.press(end, 1)
		for range lines {
			a.press(del, 1)
			a.press(back, 1)
		}
	}
	return nil
}

// checkValue checks that the input holds want, and answers with how.
func (a *actor) checkValue(want string, password bool, how string) (any, error) {
	c, err := a.get()
	if err != nil {
		return nil, err
	}
	got, _, _, _ := inputState(c)
	if got != want {
		if password {
			return nil, fmt.Errorf("the input holds %d characters, not the %d typed (its character limit, validation or Update changed them)", len([]rune(got)), len([]rune(want)))
		}
		return nil, fmt.Errorf("the input holds %q, not the text typed (its character limit, validation or Update changed it)", got)
	}
	if password {
		return map[string]any{"length": len([]rune(got)), "how": how}, nil
	}
	r := map[string]any{"value": got, "how": how}
	if e := inputErr(c); e != "" {
		// The input's Validate refused the text: the program shows it.
		r["error"] = e
	}
	return r, nil
}

// inputErr is the input's validation error, or "".
func inputErr(c any) string {
	var err error
	switch c := c.(type) {
	case *textinput.Model:
		err = c.Err
	case *textarea.Model:
		err = c.Err
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

// listTarget resolves a select's index or label among the list's visible
// items: -1 with neither.
func listTarget(l *list.Model, args map[string]any) (int, error) {
	items := l.VisibleItems()
	idx, hasIdx, err := intArg(args, "index")
	if err != nil {
		return 0, err
	}
	label, hasLabel := args["label"].(string)
	switch {
	case hasIdx && hasLabel:
		return 0, errors.New("give index or label, not both")
	case hasIdx:
		if idx < 0 || idx >= len(items) {
			return 0, fmt.Errorf("index %d is out of range: the list shows %d items (0 to %d)", idx, len(items), len(items)-1)
		}
		return idx, nil
	case hasLabel:
		return findLabel(l, items, label)
	}
	return -1, nil
}

// findLabel returns the index of the visible item whose label (or
// FilterValue) is label: exactly, else ignoring case, else the one item
// whose label contains it.
func findLabel(l *list.Model, items []list.Item, label string) (int, error) {
	want := strings.TrimSpace(label)
	labels := make([]string, len(items))
	d := listDelegate(l)
	for i, it := range items {
		labels[i] = itemLabel(l, d, i, it)
		if labels[i] == want || it.FilterValue() == want {
			return i, nil
		}
	}
	for i, l := range labels {
		if strings.EqualFold(l, want) {
			return i, nil
		}
	}
	match := -1
	for i, l := range labels {
		if strings.Contains(strings.ToLower(l), strings.ToLower(want)) {
			if match >= 0 {
				return 0, fmt.Errorf("label %q matches several items (%q, %q...): give its index or the whole label", label, labels[match], l)
			}
			match = i
		}
	}
	if match < 0 {
		return 0, fmt.Errorf("no item has the label %q among the %d items shown", label, len(items))
	}
	return match, nil
}

// listSelect moves the list's selection (up/down presses from the
// current index, or Select when it is too far), checks it, and with
// activate presses the activate key.
func (a *actor) listSelect(args map[string]any, activate bool) (any, error) {
	c, err := a.get()
	if err != nil {
		return nil, err
	}
	l := c.(*list.Model)
	if l.SettingFilter() {
		// Choosing an item while the filter is being typed: accept it
		// first, as a person would.
		if k, ok := bindingKey(l.KeyMap.AcceptWhileFiltering); ok {
			a.press(k, 1)
			if c, err = a.get(); err != nil {
				return nil, err
			}
			l = c.(*list.Model)
		}
		if l.SettingFilter() {
			return nil, a.errIgnored()
		}
	}
	target, err := listTarget(l, args)
	if err != nil {
		return nil, err
	}
	if target < 0 {
		target = l.Index()
	}
	n := len(l.VisibleItems())
	if n == 0 {
		return nil, errors.New("the list shows no items")
	}
	how := "keys"
	if cur := l.Index(); cur != target {
		if c, how, err = a.move(move{cur: cur, target: target, forward: l.KeyMap.CursorDown, back: l.KeyMap.CursorUp, keys: true,
			setHow: "set (too far for keys)",
			set:    func(p any) error { p.(*list.Model).Select(target); return nil },
			at:     func(c any) int { return c.(*list.Model).Index() },
			what:   "the selection is at index %d, not %d, after the keys"}); err != nil {
			return nil, err
		}
		l = c.(*list.Model)
	}
	label := itemLabel(l, listDelegate(l), target, l.VisibleItems()[target])
	r := map[string]any{"index": target, "label": label, "how": how}
	if activate {
		if err := a.activate(); err != nil {
			return nil, err
		}
		r["activated"] = true
	}
	return r, nil
}

// activate presses the component's activate key (Enter unless
// configured).
func (a *actor) activate() error {
	name := a.opts.activateKeyName(a.f)
	k, ok := parseKeyName(name)
	if !ok {
		return fmt.Errorf("the configured activate key %q is not a key a terminal sends", name)
	}
	a.press(k, 1)
	return nil
}

// listFilter types text into the list's filter: the filter key, then the
// text, leaving the filter being typed (the list shows the matches as
// they come); empty text clears the filter.
func (a *actor) listFilter(text string) (any, error) {
	if err := cleanText(text, false); err != nil {
		return nil, err
	}
	c, err := a.get()
	if err != nil {
		return nil, err
	}
	l := c.(*list.Model)
	if !l.FilteringEnabled() {
		return nil, errors.New("the list has filtering turned off")
	}
	switch l.FilterState() {
	case list.Filtering:
		if k, ok := bindingKey(l.KeyMap.CancelWhileFiltering); ok {
			a.press(k, 1)
		}
	case list.FilterApplied:
		if k, ok := bindingKey(l.KeyMap.ClearFilter); ok {
			a.press(k, 1)
		}
	}
	if c, err = a.get(); err != nil {
		return nil, err
	}
	l = c.(*list.Model)
	if l.FilterState() != list.Unfiltered {
		return nil, a.errIgnored()
	}
	if text == "" {
		return map[string]any{"filter": "", "count": len(l.VisibleItems())}, nil
	}
	k, ok := bindingKey(l.KeyMap.Filter)
	if !ok {
		return nil, errors.New("the list has no key that starts a filter")
	}
	a.press(k, 1)
	for _, r := range text {
		a.press(runeKey(r), 1)
	}
	if c, err = a.get(); err != nil {
		return nil, err
	}
	l = c.(*list.Model)
	if !l.SettingFilter() {
		return nil, a.errIgnored()
	}
	if got := l.FilterValue(); got != text {
		return nil, fmt.Errorf("the filter holds %q, not the text typed", got)
	}
	return map[string]any{"filter": text, "state": "filtering: matches arrive as the list computes them; select or activate accepts the filter"}, nil
}

// tableSelect moves the table's cursor (up/down presses when focused,
// SetCursor when not or too far), checks it, and with activate presses
// the activate key.
func (a *actor) tableSelect(args map[string]any, activate bool) (any, error) {
	c, err := a.get()
	if err != nil {
		return nil, err
	}
	t := c.(*table.Model)
	rows := len(t.Rows())
	target, has, err := intArg(args, "index")
	if err != nil {
		return nil, err
	}
	if !has {
		target = t.Cursor()
	}
	if target < 0 || target >= rows {
		return nil, fmt.Errorf("index %d is out of range: the table has %d rows (0 to %d)", target, rows, rows-1)
	}
	how := "keys"
	if cur := t.Cursor(); cur != target {
		if c, how, err = a.move(move{cur: cur, target: target, forward: t.KeyMap.LineDown, back: t.KeyMap.LineUp, keys: t.Focused(),
			setHow: "set (the table is not focused or the row too far for keys)",
			set:    func(p any) error { p.(*table.Model).SetCursor(target); return nil },
			at:     func(c any) int { return c.(*table.Model).Cursor() },
			what:   "the cursor is at row %d, not %d, after the keys"}); err != nil {
			return nil, err
		}
		t = c.(*table.Model)
	}
	r := map[string]any{"index": target, "row": append([]string(nil), t.Rows()[target]...), "how": how}
	if activate {
		if err := a.activate(); err != nil {
			return nil, err
		}
		r["activated"] = true
	}
	return r, nil
}

// scroll moves a viewport's top line to line (scroll) or by lines
// (scroll_by, stopping at either end): down/up presses, SetYOffset when
// too far.
func (a *actor) scroll(args map[string]any, by bool) (any, error) {
	c, err := a.get()
	if err != nil {
		return nil, err
	}
	v := c.(*viewport.Model)
	cur := v.YOffset()
	maxOff := max(0, v.TotalLineCount()-v.Height())
	var target int
	if by {
		n, _, err := intArg(args, "lines")
		if err != nil {
			return nil, err
		}
		target = min(max(cur+n, 0), maxOff)
	} else {
		n, _, err := intArg(args, "line")
		if err != nil {
			return nil, err
		}
		if n < 0 || n > maxOff {
			return nil, fmt.Errorf("line %d is out of range: the top line can be 0 to %d (%d lines, %d shown)", n, maxOff, v.TotalLineCount(), v.Height())
		}
		target = n
	}
	how := "keys"
	if target != cur {
		if c, how, err = a.move(move{cur: cur, target: target, forward: v.KeyMap.Down, back: v.KeyMap.Up, keys: true,
			setHow: "set (too far for keys)",
			set:    func(p any) error { p.(*viewport.Model).SetYOffset(target); return nil },
			at:     func(c any) int { vp := c.(*viewport.Model); return vp.YOffset() },
			what:   "the view's top line is %d, not %d, after the keys"}); err != nil {
			return nil, err
		}
		v = c.(*viewport.Model)
	}
	return map[string]any{"y_offset": target, "total_lines": v.TotalLineCount(), "at_bottom": v.AtBottom(), "how": how}, nil
}

// goToPage moves a paginator to page: next/previous presses, setting
// Page when too far.
func (a *actor) goToPage(args map[string]any) (any, error) {
	c, err := a.get()
	if err != nil {
		return nil, err
	}
	p := c.(*paginator.Model)
	target, _, err := intArg(args, "page")
	if err != nil {
		return nil, err
	}
	if target < 0 || target >= p.TotalPages {
		return nil, fmt.Errorf("page %d is out of range: there are %d pages (0 to %d)", target, p.TotalPages, p.TotalPages-1)
	}
	how := "keys"
	if cur := p.Page; cur != target {
		if _, how, err = a.move(move{cur: cur, target: target, forward: p.KeyMap.NextPage, back: p.KeyMap.PrevPage, keys: true,
			setHow: "set (too far for keys)",
			set:    func(ptr any) error { ptr.(*paginator.Model).Page = target; return nil },
			at:     func(c any) int { return c.(*paginator.Model).Page },
			what:   "the paginator is on page %d, not %d, after the keys"}); err != nil {
			return nil, err
		}
	}
	return map[string]any{"page": target, "how": how}, nil
}

// filepick opens a directory, selects a file or goes back in a file
// picker, with its keys: the entry is highlighted by moving down from the
// top until it is.
func (a *actor) filepick(action string, args map[string]any) (any, error) {
	c, err := a.get()
	if err != nil {
		return nil, err
	}
	fp := c.(*filepicker.Model)
	dir := fp.CurrentDirectory
	if action == "back" {
		k, ok := bindingKey(fp.KeyMap.Back)
		if !ok {
			return nil, errors.New("the file picker has no key to go back")
		}
		a.press(k, 1)
		if c, err = a.get(); err != nil {
			return nil, err
		}
		got := c.(*filepicker.Model).CurrentDirectory
		if got == dir && filepath.Dir(dir) != dir {
			return nil, a.errIgnored()
		}
		return map[string]any{"directory": got}, nil
	}
	p, _ := args["path"].(string)
	if err := cleanText(p, false); err != nil {
		return nil, err
	}
	want := p
	if !filepath.IsAbs(p) {
		want = filepath.Join(dir, p)
	}
	want = filepath.Clean(want)
	if filepath.Dir(want) != filepath.Clean(dir) {
		return nil, fmt.Errorf("%q is not an entry of the current directory %s: open its directories one by one", p, dir)
	}
	if err := a.highlight(fp, want); err != nil {
		return nil, err
	}
	if c, err = a.get(); err != nil {
		return nil, err
	}
	fp = c.(*filepicker.Model)
	if action == "open" {
		k, ok := bindingKey(fp.KeyMap.Open)
		if !ok {
			return nil, errors.New("the file picker has no key to open a directory")
		}
		a.press(k, 1)
		if c, err = a.get(); err != nil {
			return nil, err
		}
		got := c.(*filepicker.Model).CurrentDirectory
		if got != want {
			if got == dir {
				return nil, fmt.Errorf("%s did not open %q: it is not a directory, or the program did not pass the keys", a.f.Name, p)
			}
			return nil, fmt.Errorf("the file picker is in %s, not %s", got, want)
		}
		return map[string]any{"directory": got}, nil
	}
	k, ok := bindingKey(fp.KeyMap.Select)
	if !ok {
		return nil, errors.New("the file picker has no key to select a file")
	}
	if did, _ := fp.DidSelectDisabledFile(k); did {
		return nil, fmt.Errorf("%q cannot be selected: its type is not allowed", p)
	}
	a.press(k, 1)
	if c, err = a.get(); err != nil {
		return nil, err
	}
	if got := c.(*filepicker.Model).Path; got != want {
		return nil, fmt.Errorf("the file picker did not select %q: the program did not pass the keys, or the entry is not selectable", p)
	}
	return map[string]any{"selected": want}, nil
}

// highlight moves the file picker's highlight to the entry want: to the
// top, then down until it is there (at most maxPresses presses).
func (a *actor) highlight(fp *filepicker.Model, want string) error {
	if fp.HighlightedPath() == want {
		return nil
	}
	top, okT := bindingKey(fp.KeyMap.GoToTop)
	down, okD := bindingKey(fp.KeyMap.Down)
	if !okT || !okD {
		return errors.New("the file picker has no keys to move its highlight")
	}
	if fp.HighlightedPath() == "" {
		return fmt.Errorf("the file picker shows no entries in %s (it reads its directory with a command: try again once it has)", fp.CurrentDirectory)
	}
	a.press(top, 1)
	last := ""
	for range maxPresses {
		c, err := a.get()
		if err != nil {
			return err
		}
		h := c.(*filepicker.Model).HighlightedPath()
		if h == want {
			return nil
		}
		if h == last {
			break
		}
		last = h
		a.press(down, 1)
	}
	return fmt.Errorf("no entry %q in %s, or the program did not pass the keys to %s", filepath.Base(want), filepath.Dir(want), a.f.Name)
}
