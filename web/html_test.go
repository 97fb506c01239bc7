package web

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// fataler is what parse needs of a *testing.T or a *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// parse parses a fragment as the children of a <body>, under one root.
func parse(t fataler, b []byte) *html.Node {
	t.Helper()
	nodes, err := html.ParseFragment(bytes.NewReader(b), &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	root := &html.Node{Type: html.ElementNode, Data: "root"}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	return root
}

func attr(n *html.Node, name string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

func attrIs(n *html.Node, name, val string) bool {
	v, ok := attr(n, name)
	return ok && v == val
}

// elements returns the elements under n (n included) for which keep is
// true, in document order.
func elements(n *html.Node, keep func(*html.Node) bool) []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && keep(n) {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return out
}

func tagged(tag string) func(*html.Node) bool {
	return func(n *html.Node) bool { return n.Data == tag }
}

// byDataID returns the element whose data-id is id.
func byDataID(t testing.TB, root *html.Node, id string) *html.Node {
	t.Helper()
	els := elements(root, func(n *html.Node) bool { return attrIs(n, "data-id", id) })
	if len(els) != 1 {
		t.Fatalf("%d elements with data-id %q, want 1", len(els), id)
	}
	return els[0]
}

func byID(root *html.Node, id string) *html.Node {
	els := elements(root, func(n *html.Node) bool { return attrIs(n, "id", id) })
	if len(els) != 1 {
		return nil
	}
	return els[0]
}

// textOf is the text content of n.
func textOf(n *html.Node) string { return strings.TrimSpace(textOfAll(n)) }

// implicitRoles are the roles the elements this package writes have
// without a role attribute, for the ones a user interacts with.
var implicitRoles = map[string]string{"button": "button", "textarea": "textbox"}

// role is n's role: its role attribute, or the one its element implies
// ("" when none that matters here).
func role(n *html.Node) string {
	if r, ok := attr(n, "role"); ok {
		return r
	}
	if n.Data == "input" {
		switch typ, _ := attr(n, "type"); typ {
		case "checkbox":
			return "checkbox"
		case "range":
			return "slider"
		default:
			return "textbox"
		}
	}
	if n.Data == "table" {
		return "table"
	}
	if n.Data == "dialog" {
		return "dialog"
	}
	return implicitRoles[n.Data]
}

// accessibleName is n's name as a browser computes it, for the ways this
// package names things: aria-labelledby, aria-label, a <label for>, the
// text content.
func accessibleName(root, n *html.Node) string {
	if ids, ok := attr(n, "aria-labelledby"); ok {
		var parts []string
		for _, id := range strings.Fields(ids) {
			if el := byID(root, id); el != nil {
				parts = append(parts, textOf(el))
			}
		}
		return strings.TrimSpace(strings.Join(parts, " "))
	}
	if l, ok := attr(n, "aria-label"); ok && strings.TrimSpace(l) != "" {
		return l
	}
	if id, ok := attr(n, "id"); ok {
		for _, l := range elements(root, tagged("label")) {
			if attrIs(l, "for", id) {
				return textOf(l)
			}
		}
	}
	switch n.Data {
	case "button", "li", "th", "td", "a":
		return textOf(n)
	}
	if r := role(n); r == "tab" || r == "option" || r == "menuitem" || r == "treeitem" {
		return textOf(n)
	}
	return ""
}
