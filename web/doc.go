// Package web is the browser's projection of a component tree: semantic,
// accessible HTML for the same [ui.Node] tree a terminal draws.
//
// What flows in: a tree (an app's View, or a hosted program's [ui.Hosted]
// root) and [Options]: the widget with focus, the terminal-style local
// state of each widget, the width app-defined widgets are drawn at, and the
// bounds on the output.
//
// What flows out: an HTML5 fragment (no <html>, <head> or <body>: the page
// shell is someone else's) from [Render], or one widget's element, the
// very bytes Render writes for it, from [RenderWidget]. Where a terminal
// highlights a row that the app has not selected (arrow keys move it
// locally), the row is marked data-highlighted; the app's selection is
// aria-selected. Each built-in widget is the element a browser user and a
// screen reader expect (a Button a <button>, a TextInput an <input> with its
// <label>, a Table a <table> with <th scope="col"> and its selected row
// aria-selected, Tabs a tablist, a Modal a <dialog>, a chart a <figure>
// whose text alternative is a small table of its values); layout nodes are
// <div>s with classes; an app-defined widget is a role="group" holding its
// terminal drawing as text, and a hosted program its screen's text in a
// <pre> with its components beside it.
//
// Every widget's outermost element carries data-id (the widget id, which a
// live channel names to replace that one element) and an id attribute
// derived from it ("raxol-" and the id with every byte outside
// [A-Za-z0-9-] hex-escaped). All app text is cleaned (escape sequences and
// control characters removed, bounded) and HTML-escaped; there are no
// inline scripts, event handlers or style attributes, so the page can run
// under a strict Content-Security-Policy. The output is bounded
// ([Options.MaxBytes], [Options.MaxRows]): a hostile tree cannot make it
// grow without limit. A PasswordField's value is never written.
//
// Package web imports only package ui of this module.
package web
