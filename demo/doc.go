// Package demo is the built-in app served by default: a small operations
// console that uses every widget type for something real.
//
// What flows in: the ui messages its widgets send (typed by a human over
// SSH or sent by an agent's tool call alike) and its own timer ticks.
// What flows out: a component tree (View) and plain projections of the
// model ([Projections]) for MCP resources.
//
// Its tool namespace is [Name] ("demo").
package demo
