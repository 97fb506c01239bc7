package web

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"pgregory.net/rapid"
)

// written is the element tree out says, read tag by tag: each element as
// its path of tags from the top.
func written(t fataler, out []byte) []string {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(out))
	var stack, paths []string
	for {
		switch z.Next() {
		case html.ErrorToken:
			if len(stack) != 0 {
				t.Fatalf("unclosed: %v", stack)
			}
			return paths
		case html.StartTagToken:
			name, _ := z.TagName()
			stack = append(stack, string(name))
			paths = append(paths, strings.Join(stack, "/"))
			if string(name) == "input" || string(name) == "br" {
				stack = stack[:len(stack)-1]
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if len(stack) == 0 || stack[len(stack)-1] != string(name) {
				t.Fatalf("</%s> closes %v", name, stack)
			}
			stack = stack[:len(stack)-1]
		case html.SelfClosingTagToken:
			t.Fatalf("a self-closing tag")
		}
	}
}

// parsed is the element tree a browser builds from out, as written gives it.
func parsed(t fataler, out []byte) []string {
	root := parse(t, out)
	var paths []string
	var walk func(n *html.Node, path string)
	walk = func(n *html.Node, path string) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			p := c.Data
			if path != "" {
				p = path + "/" + c.Data
			}
			paths = append(paths, p)
			walk(c, p)
		}
	}
	walk(root, "")
	return paths
}

// sameTree fails when a browser would build another tree than the one
// written: a tag the parser closes or moves (a <div> in a <p>, a <table>
// in a <button>).
func sameTree(t fataler, out []byte) {
	t.Helper()
	w, p := written(t, out), parsed(t, out)
	if strings.Join(w, "\n") != strings.Join(p, "\n") {
		t.Fatalf("the parser builds another tree:\n%s", diff(w, p))
	}
}

func TestBrowsersBuildTheTreeWritten(t *testing.T) {
	for name, view := range demoViews(t) {
		t.Run(name, func(t *testing.T) { sameTree(t, Render(view, Options{})) })
	}
	rapid.Check(t, func(t *rapid.T) {
		sameTree(t, Render(genTree(t).root, Options{}))
	})
}
