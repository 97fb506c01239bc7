package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// This file holds the MCP tools of the input widgets (Button, TextInput,
// TextArea, PasswordField, Checkbox, SelectList, Tabs and Menu) and the
// helpers every widget's tools share. tools_display.go has the rest.
//
// Every write sends exactly the messages the widget's keyboard path sends
// for the same change, and sends nothing when a person's equivalent key
// press would change nothing (the result then says "changed": false).
// Descriptions and schemas are static per (widget type, action): app text
// appears only in results, State and error messages.

var (
	_ ToolProvider = Button{}
	_ ToolProvider = TextInput{}
	_ ToolProvider = TextArea{}
	_ ToolProvider = PasswordField{}
	_ ToolProvider = Checkbox{}
	_ ToolProvider = SelectList{}
	_ ToolProvider = Tabs{}
	_ ToolProvider = Menu{}
)

// Argument names and their static schema descriptions.
const (
	argText     = "text"
	argIndex    = "index"
	argItemID   = "item_id"
	argNodeID   = "node_id"
	argColumn   = "column"
	argDir      = "direction"
	argPosition = "position"
	argRow      = "row"
)

// okResult is the result of a write that sent its message.
func okResult() map[string]any { return map[string]any{"ok": true} }

// unchangedResult is the result of a write that changed nothing, so sent
// nothing, like the equivalent key press.
func unchangedResult(why string) map[string]any {
	return map[string]any{"ok": true, "changed": false, "reason": why}
}

// tool builds a ToolSpec with a fresh schema, so callers may change what
// they get.
func tool(action, desc string, props map[string]any, required ...string) ToolSpec {
	return ToolSpec{Action: action, Description: desc, InputSchema: ObjectSchema(props, required...)}
}

// readTool builds a read action's ToolSpec (see [ToolSpec.ReadOnly]).
func readTool(action, desc string, props map[string]any, required ...string) ToolSpec {
	t := tool(action, desc, props, required...)
	t.ReadOnly = true
	return t
}

// indexProp is a zero-based integer property.
func indexProp(desc string) map[string]any {
	p := Prop("integer", desc)
	p["minimum"] = 0
	return p
}

// errUnknownAction is the error for an action a widget does not have.
func errUnknownAction(action string) error {
	return fmt.Errorf("unknown action %q", action)
}

// checkArgs rejects arguments other than allowed, which the schemas
// forbid (additionalProperties is false).
func checkArgs(args map[string]any, allowed ...string) error {
	var extra []string
	for k := range args {
		if !slices.Contains(allowed, k) {
			extra = append(extra, strconv.Quote(k))
		}
	}
	if len(extra) == 0 {
		return nil
	}
	slices.Sort(extra)
	if len(allowed) == 0 {
		return fmt.Errorf("unexpected argument %s: this action takes no arguments", strings.Join(extra, ", "))
	}
	want := make([]string, len(allowed))
	for i, a := range allowed {
		want[i] = strconv.Quote(a)
	}
	return fmt.Errorf("unexpected argument %s: this action takes %s", strings.Join(extra, ", "), strings.Join(want, ", "))
}

// jsonType names the JSON type of an argument value, for errors.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, float32, int, int64, int32, json.Number:
		return "number"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}

// intArg returns the integer argument name. Numbers arrive as float64
// from JSON; a non-integral, non-finite or huge value is an error, as is a
// value of another type or a missing one.
func intArg(args map[string]any, name string) (int, error) {
	v, ok := args[name]
	if !ok {
		return 0, fmt.Errorf("missing required argument %q (an integer)", name)
	}
	var f float64
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		if n < math.MinInt || n > math.MaxInt {
			return 0, fmt.Errorf("argument %q is too large", name)
		}
		return int(n), nil
	case int32:
		return int(n), nil
	case float64:
		f = n
	case float32:
		f = float64(n)
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return intArg(map[string]any{name: i}, name)
		}
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, fmt.Errorf("argument %q must be an integer, got %q", name, n.String())
		}
	default:
		return 0, fmt.Errorf("argument %q must be an integer, got %s", name, jsonType(v))
	}
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return 0, fmt.Errorf("argument %q must be an integer, got a non-finite number", name)
	case f != math.Trunc(f):
		return 0, fmt.Errorf("argument %q must be an integer, got %s", name, strconv.FormatFloat(f, 'g', -1, 64))
	case f < -(1<<53) || f > 1<<53:
		// Beyond 2^53 a float64 no longer holds every integer; no widget
		// has ranges that large.
		return 0, fmt.Errorf("argument %q is too large: %s", name, strconv.FormatFloat(f, 'g', -1, 64))
	}
	return int(f), nil
}

// stringArg returns the string argument name. A missing argument is an
// error when required; otherwise it returns ok false. A JSON null counts as
// missing for an optional argument.
func stringArg(args map[string]any, name string, required bool) (s string, ok bool, err error) {
	v, present := args[name]
	if !present || (v == nil && !required) {
		if required {
			return "", false, fmt.Errorf("missing required argument %q (a string)", name)
		}
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", false, fmt.Errorf("argument %q must be a string, got %s", name, jsonType(v))
	}
	return s, true, nil
}

// plural returns "n noun" or "n nouns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// indexRangeErr is the error for index v of a container holding n items,
// e.g. `index 9 is out of range: this list has 4 options (0-3)`.
func indexRangeErr(arg string, v, n int, container, noun string) error {
	if n == 0 {
		return fmt.Errorf("%s %d is out of range: %s has no %ss", arg, v, container, noun)
	}
	return fmt.Errorf("%s %d is out of range: %s has %s (0-%d)", arg, v, container, plural(n, noun), n-1)
}

// checkIndex reads the integer argument arg and checks it against [0, n).
func checkIndex(args map[string]any, arg string, n int, container, noun string) (int, error) {
	i, err := intArg(args, arg)
	if err != nil {
		return 0, err
	}
	if i < 0 || i >= n {
		return 0, indexRangeErr(arg, i, n, container, noun)
	}
	return i, nil
}

// jsonFloat returns v, or nil (JSON null) when v is NaN or infinite, which
// encoding/json cannot encode.
func jsonFloat(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// jsonFloats maps a slice through jsonFloat; never nil.
func jsonFloats(vs []float64) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = jsonFloat(v)
	}
	return out
}

// cloneStrings copies ss; never nil, so it encodes as [] rather than null.
func cloneStrings(ss []string) []string {
	out := make([]string, len(ss))
	copy(out, ss)
	return out
}

// inRange returns i, or -1 when i is not in [0, n).
func inRange(i, n int) int {
	if i < 0 || i >= n {
		return -1
	}
	return i
}

// ---- Button ----

// Tools returns click, annotated destructiveHint when Destructive is set;
// none while disabled.
func (b Button) Tools() []ToolSpec {
	if b.Disabled {
		return nil
	}
	t := tool("click", "Press this button, exactly as a person would by clicking it or pressing Enter on it. Takes no arguments.", nil)
	if b.Destructive {
		t.Annotations = map[string]any{"destructiveHint": true}
	}
	return []ToolSpec{t}
}

// CallTool runs click, sending OnClick like Enter does. It fails when
// OnClick is nil or a function (such as a tea.Cmd), which is not a message
// an app's Update could receive.
func (b Button) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "click" {
		return nil, nil, errUnknownAction(action)
	}
	if b.Disabled {
		return nil, nil, errors.New("this button is disabled")
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	if b.OnClick == nil {
		return nil, nil, errors.New("this button has no action: pressing it does nothing")
	}
	if reflect.ValueOf(b.OnClick).Kind() == reflect.Func {
		return nil, nil, errors.New("this button's action cannot be triggered as a message")
	}
	return okResult(), []tea.Msg{b.OnClick}, nil
}

// State returns type, id, label, disabled and destructive.
func (b Button) State() any {
	return map[string]any{
		"type":        "button",
		"id":          b.ID,
		"label":       b.Label,
		"disabled":    b.Disabled,
		"destructive": b.Destructive,
	}
}

// ---- Text fields ----

// checkText validates the text of a type_into call for a field that takes
// at most maxLen runes and returns it as the field would hold it. A text
// area takes line breaks, normalised to "\n" as a paste's are; the
// one-line fields refuse them. Other control characters than tab are
// refused (typing could not insert them). Errors never quote the text, so
// a password cannot leak through them.
func checkText(text string, maxLen int, multiline bool) (string, error) {
	if !utf8.ValidString(text) {
		return "", errors.New(`argument "text" is not valid UTF-8`)
	}
	if multiline {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	} else if strings.ContainsAny(text, "\r\n") {
		return "", errors.New(`argument "text" contains a line break, but this is a single-line field`)
	}
	for _, r := range text {
		if unicode.IsControl(r) && r != '\t' && r != '\n' {
			if multiline {
				return "", errors.New(`argument "text" contains a control character: only tabs and line breaks are allowed`)
			}
			return "", errors.New(`argument "text" contains a control character: only tabs are allowed`)
		}
	}
	if utf8.RuneCountInString(text) > maxLen {
		return "", fmt.Errorf(`argument "text" is too long: this field takes at most %d characters`, maxLen)
	}
	return text, nil
}

// textFieldCall is the shared CallTool of the three text fields. changed
// builds the field's message; getValue is false for a PasswordField.
func textFieldCall(kind, action string, args map[string]any, disabled bool, maxLen int, multiline, getValue bool,
	value string, changed func(string) tea.Msg) (any, []tea.Msg, error) {
	switch action {
	case "type_into", "clear":
	case "get_value":
		if !getValue {
			return nil, nil, errUnknownAction(action)
		}
	default:
		return nil, nil, errUnknownAction(action)
	}
	if disabled {
		return nil, nil, fmt.Errorf("this %s is disabled", kind)
	}
	switch action {
	case "type_into":
		if err := checkArgs(args, argText); err != nil {
			return nil, nil, err
		}
		text, _, err := stringArg(args, argText, true)
		if err != nil {
			return nil, nil, err
		}
		if text, err = checkText(text, maxLen, multiline); err != nil {
			return nil, nil, err
		}
		return okResult(), []tea.Msg{changed(text)}, nil
	case "clear":
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return okResult(), []tea.Msg{changed("")}, nil
	default: // get_value
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return map[string]any{"value": value}, nil, nil
	}
}

// maxLen returns the effective length limit of the field.
func (t TextInput) maxLen() int { return lenLimit(t.MaxLen, DefaultMaxLen) }

// Tools returns type_into, clear and get_value; none while disabled.
func (t TextInput) Tools() []ToolSpec {
	if t.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("type_into", "Replace the whole text of this single-line text input with the given text. Line breaks are not allowed. To add to the current text, read it first with get_value.",
			map[string]any{argText: Prop("string", "The new full text of the field; it replaces the current text.")}, argText),
		tool("clear", "Erase all the text of this single-line text input.", nil),
		readTool("get_value", "Return the current text of this single-line text input.", nil),
	}
}

// CallTool runs type_into (sending [TextInputChanged] with the new whole
// text), clear or get_value.
func (t TextInput) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return textFieldCall("text input", action, args, t.Disabled, t.maxLen(), false, true, t.Value,
		func(s string) tea.Msg { return TextInputChanged{ID: t.ID, Text: s} })
}

// State returns type, id, label, value, placeholder, max_len (the
// effective limit, in characters) and disabled.
func (t TextInput) State() any {
	return map[string]any{
		"type":        "text_input",
		"id":          t.ID,
		"label":       t.Label,
		"value":       t.Value,
		"placeholder": t.Placeholder,
		"max_len":     t.maxLen(),
		"disabled":    t.Disabled,
	}
}

// maxLen returns the effective length limit of the field.
func (t TextArea) maxLen() int { return lenLimit(t.MaxLen, 4*DefaultMaxLen) }

// Tools returns type_into, clear and get_value; none while disabled.
func (t TextArea) Tools() []ToolSpec {
	if t.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("type_into", "Replace the whole text of this multi-line text area with the given text; separate lines with \"\\n\". To add to the current text, read it first with get_value.",
			map[string]any{argText: Prop("string", "The new full text of the field, lines separated by \"\\n\"; it replaces the current text.")}, argText),
		tool("clear", "Erase all the text of this multi-line text area.", nil),
		readTool("get_value", "Return the current text of this multi-line text area, lines separated by \"\\n\".", nil),
	}
}

// CallTool runs type_into (sending [TextAreaChanged] with the new whole
// text, line breaks normalised to "\n"), clear or get_value.
func (t TextArea) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return textFieldCall("text area", action, args, t.Disabled, t.maxLen(), true, true, t.Value,
		func(s string) tea.Msg { return TextAreaChanged{ID: t.ID, Text: s} })
}

// State returns type, id, label, value, placeholder, max_len (the
// effective limit, in characters), height (visible lines) and disabled.
func (t TextArea) State() any {
	return map[string]any{
		"type":        "text_area",
		"id":          t.ID,
		"label":       t.Label,
		"value":       t.Value,
		"placeholder": t.Placeholder,
		"max_len":     t.maxLen(),
		"height":      t.height(),
		"disabled":    t.Disabled,
	}
}

// maxLen returns the effective length limit of the field.
func (p PasswordField) maxLen() int { return lenLimit(p.MaxLen, DefaultMaxLen) }

// Tools returns type_into and clear, both annotated sensitive; none while
// disabled. There is no get_value: the text is never read back.
func (p PasswordField) Tools() []ToolSpec {
	if p.Disabled {
		return nil
	}
	typeInto := tool("type_into", "Replace the whole secret text of this password field with the given text. Line breaks are not allowed. The text is never shown or returned.",
		map[string]any{argText: Prop("string", "The new full secret text of the field; it replaces the current text.")}, argText)
	typeInto.Annotations = map[string]any{"sensitive": true}
	clear := tool("clear", "Erase the secret text of this password field.", nil)
	clear.Annotations = map[string]any{"sensitive": true}
	return []ToolSpec{typeInto, clear}
}

// CallTool runs type_into (sending [PasswordFieldChanged] with the new
// whole text) or clear. Neither the result nor an error carries the text.
func (p PasswordField) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	return textFieldCall("password field", action, args, p.Disabled, p.maxLen(), false, false, "",
		func(s string) tea.Msg { return PasswordFieldChanged{ID: p.ID, Text: s} })
}

// State returns type, id, label, placeholder, set (whether the text is
// not empty; never the text nor its length), max_len and disabled.
func (p PasswordField) State() any {
	return map[string]any{
		"type":        "password_field",
		"id":          p.ID,
		"label":       p.Label,
		"placeholder": p.Placeholder,
		"set":         p.Value != "",
		"max_len":     p.maxLen(),
		"disabled":    p.Disabled,
	}
}

// ---- Checkbox ----

// Tools returns toggle and get_checked; none while disabled.
func (c Checkbox) Tools() []ToolSpec {
	if c.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("toggle", "Flip this checkbox: check it when it is unchecked, uncheck it when it is checked. Call get_checked first if you need a particular state.", nil),
		readTool("get_checked", "Return whether this checkbox is currently checked.", nil),
	}
}

// CallTool runs toggle (sending [CheckboxToggled] with the opposite of
// Checked, as Enter does) or get_checked.
func (c Checkbox) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "toggle" && action != "get_checked" {
		return nil, nil, errUnknownAction(action)
	}
	if c.Disabled {
		return nil, nil, errors.New("this checkbox is disabled")
	}
	if err := checkArgs(args); err != nil {
		return nil, nil, err
	}
	if action == "get_checked" {
		return map[string]any{"checked": c.Checked}, nil, nil
	}
	return map[string]any{"ok": true, "checked": !c.Checked}, []tea.Msg{CheckboxToggled{ID: c.ID, Checked: !c.Checked}}, nil
}

// State returns type, id, label, checked and disabled.
func (c Checkbox) State() any {
	return map[string]any{
		"type":     "checkbox",
		"id":       c.ID,
		"label":    c.Label,
		"checked":  c.Checked,
		"disabled": c.Disabled,
	}
}

// ---- SelectList ----

// Tools returns select, get_selected and get_options; none while disabled.
func (l SelectList) Tools() []ToolSpec {
	if l.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("select", "Choose the option at the given zero-based index of this list, as a person choosing it would. Call get_options to see the options in order.",
			map[string]any{argIndex: indexProp("Zero-based index of the option to choose.")}, argIndex),
		readTool("get_selected", "Return the index and label of the chosen option of this list, or index -1 and a null label when none is chosen.", nil),
		readTool("get_options", "Return the labels of this list's options in order; an option's index is its position in that list.", nil),
	}
}

// CallTool runs select (sending [OptionSelected], as Enter on the option
// does), get_selected or get_options.
func (l SelectList) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	switch action {
	case "select", "get_selected", "get_options":
	default:
		return nil, nil, errUnknownAction(action)
	}
	if l.Disabled {
		return nil, nil, errors.New("this select list is disabled")
	}
	switch action {
	case "select":
		if err := checkArgs(args, argIndex); err != nil {
			return nil, nil, err
		}
		i, err := checkIndex(args, argIndex, len(l.Options), "this list", "option")
		if err != nil {
			return nil, nil, err
		}
		return okResult(), []tea.Msg{OptionSelected{ID: l.ID, Index: i}}, nil
	case "get_selected":
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		if i := inRange(l.Selected, len(l.Options)); i >= 0 {
			return map[string]any{"index": i, "label": l.Options[i]}, nil, nil
		}
		return map[string]any{"index": -1, "label": nil}, nil, nil
	default: // get_options
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return map[string]any{"options": cloneStrings(l.Options)}, nil, nil
	}
}

// State returns type, id, label, options, selected (-1 for none) and
// disabled.
func (l SelectList) State() any {
	return map[string]any{
		"type":     "select_list",
		"id":       l.ID,
		"label":    l.Label,
		"options":  cloneStrings(l.Options),
		"selected": inRange(l.Selected, len(l.Options)),
		"disabled": l.Disabled,
	}
}

// ---- Tabs ----

// Tools returns select_tab and get_tabs; none while disabled.
func (t Tabs) Tools() []ToolSpec {
	if t.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("select_tab", "Make the tab at the given zero-based index the active tab. Call get_tabs to see the tabs in order.",
			map[string]any{argIndex: indexProp("Zero-based index of the tab to make active.")}, argIndex),
		readTool("get_tabs", "Return the labels of the tabs in order and the index of the active tab (-1 when none is active).", nil),
	}
}

// CallTool runs select_tab (sending [TabChanged] like the arrow keys do;
// nothing when the tab is already active, as a key press would) or
// get_tabs.
func (t Tabs) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "select_tab" && action != "get_tabs" {
		return nil, nil, errUnknownAction(action)
	}
	if t.Disabled {
		return nil, nil, errors.New("these tabs are disabled")
	}
	if action == "get_tabs" {
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return map[string]any{"tabs": cloneStrings(t.Tabs), "active": inRange(t.Active, len(t.Tabs))}, nil, nil
	}
	if err := checkArgs(args, argIndex); err != nil {
		return nil, nil, err
	}
	i, err := checkIndex(args, argIndex, len(t.Tabs), "this widget", "tab")
	if err != nil {
		return nil, nil, err
	}
	if i == t.Active {
		return unchangedResult("the tab is already active"), nil, nil
	}
	return okResult(), []tea.Msg{TabChanged{ID: t.ID, Index: i}}, nil
}

// State returns type, id, tabs, active (-1 for none) and disabled.
func (t Tabs) State() any {
	return map[string]any{
		"type":     "tabs",
		"id":       t.ID,
		"tabs":     cloneStrings(t.Tabs),
		"active":   inRange(t.Active, len(t.Tabs)),
		"disabled": t.Disabled,
	}
}

// ---- Menu ----

// Tools returns select and get_items; none while disabled.
func (m Menu) Tools() []ToolSpec {
	if m.Disabled {
		return nil
	}
	return []ToolSpec{
		tool("select", "Choose the menu item with the given item id, as a person choosing it would. Call get_items to see the item ids; disabled items cannot be chosen.",
			map[string]any{argItemID: Prop("string", "The id of the menu item to choose, as returned by get_items.")}, argItemID),
		readTool("get_items", "Return every item of this menu, nested items included, in display order, each with its id, label, nesting depth (0 for a top-level item) and whether it is disabled.", nil),
	}
}

// maxListedIDs caps the ids an error message lists.
const maxListedIDs = 20

// quoteIDs quotes ids for an error message, at most maxListedIDs of them.
func quoteIDs(ids []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i == maxListedIDs {
			fmt.Fprintf(&b, " and %d more", len(ids)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(id))
	}
	return b.String()
}

// CallTool runs select (sending [MenuSelected], as Enter on the item
// does; the item may be nested anywhere but must be enabled) or
// get_items.
func (m Menu) CallTool(action string, args map[string]any) (any, []tea.Msg, error) {
	if action != "select" && action != "get_items" {
		return nil, nil, errUnknownAction(action)
	}
	if m.Disabled {
		return nil, nil, errors.New("this menu is disabled")
	}
	lines := m.lines()
	if action == "get_items" {
		if err := checkArgs(args); err != nil {
			return nil, nil, err
		}
		return map[string]any{"items": menuItems(lines)}, nil, nil
	}
	if err := checkArgs(args, argItemID); err != nil {
		return nil, nil, err
	}
	id, _, err := stringArg(args, argItemID, true)
	if err != nil {
		return nil, nil, err
	}
	found := false
	var enabled []string
	for _, l := range lines {
		if l.item.Disabled {
			found = found || l.item.ID == id
			continue
		}
		if l.item.ID == id {
			return okResult(), []tea.Msg{MenuSelected{ID: m.ID, ItemID: id}}, nil
		}
		enabled = append(enabled, l.item.ID)
	}
	switch {
	case found:
		return nil, nil, fmt.Errorf("menu item %q is disabled", id)
	case len(enabled) == 0:
		return nil, nil, fmt.Errorf("unknown item_id %q: this menu has no enabled items", id)
	}
	return nil, nil, fmt.Errorf("unknown item_id %q: the enabled items are %s", id, quoteIDs(enabled))
}

// menuItems returns the flattened items as JSON data.
func menuItems(lines []menuLine) []any {
	out := make([]any, len(lines))
	for i, l := range lines {
		out[i] = map[string]any{
			"id":       l.item.ID,
			"label":    l.item.Label,
			"depth":    l.depth,
			"disabled": l.item.Disabled,
		}
	}
	return out
}

// State returns type, id, items (flattened depth-first, each with id,
// label, depth and disabled) and disabled.
func (m Menu) State() any {
	return map[string]any{
		"type":     "menu",
		"id":       m.ID,
		"items":    menuItems(m.lines()),
		"disabled": m.Disabled,
	}
}
