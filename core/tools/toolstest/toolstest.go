// Package toolstest provides small tools for tests of code that runs tools:
// Func, a tool made of a function, and Gate, a tool that holds each call
// until the test lets it go, so a test can act while a tool is mid-call
// without sleeping.
package toolstest

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"github.com/switchboardhq/switchboard/core/tools"
)

// Compile-time checks that both types are tools.
var (
	_ tools.Tool = (*Func)(nil)
	_ tools.Tool = (*Gate)(nil)
)

// ExecuteFunc is the body of a Func tool, with the signature of
// tools.Tool.Execute.
type ExecuteFunc func(ctx context.Context, call tools.Call, update func(tools.Result)) (tools.Result, error)

// Func is a tool whose Execute calls Fn and counts the calls.
type Func struct {
	// Def is what Spec returns.
	Def tools.Spec
	// Fn runs each call; nil returns an empty result.
	Fn ExecuteFunc

	calls atomic.Int64
}

// NewFunc returns a Func named name with the JSON Schema schema ("" means
// none) and a description made from the name.
func NewFunc(name, schema string, fn ExecuteFunc) *Func {
	def := tools.Spec{Name: name, Description: "test tool " + name}
	if schema != "" {
		def.Parameters = json.RawMessage(schema)
	}
	return &Func{Def: def, Fn: fn}
}

// Text returns a Func named name that takes any arguments and answers text.
func Text(name, text string) *Func {
	return NewFunc(name, "", func(context.Context, tools.Call, func(tools.Result)) (tools.Result, error) {
		return tools.TextResult(text), nil
	})
}

// Spec returns f.Def.
func (f *Func) Spec() tools.Spec { return f.Def }

// Execute counts the call and runs Fn.
func (f *Func) Execute(ctx context.Context, call tools.Call, update func(tools.Result)) (tools.Result, error) {
	f.calls.Add(1)
	if f.Fn == nil {
		return tools.Result{}, nil
	}
	return f.Fn(ctx, call, update)
}

// Calls returns how many times Execute has been called.
func (f *Func) Calls() int { return int(f.calls.Load()) }

// gateMsg is one instruction to a running Gate call: report an update, or
// return.
type gateMsg struct {
	update *tools.Result
	ack    chan struct{}
	result tools.Result
	err    error
}

// Gate is a tool whose calls block until the test releases them. Each call
// announces itself on Started, then waits for Update, Release or Fail, or
// for its context to end, when it returns an empty result and the
// context's error (the executor then keeps the last update as the partial
// result). Instructions go to whichever call is waiting, so a test that
// runs several calls at once uses one Gate per call.
type Gate struct {
	// Def is what Spec returns.
	Def tools.Spec

	started chan tools.Call
	msgs    chan gateMsg
}

// NewGate returns a Gate named name that takes any arguments.
func NewGate(name string) *Gate {
	return &Gate{
		Def:     tools.Spec{Name: name, Description: "test gate " + name},
		started: make(chan tools.Call, 16),
		msgs:    make(chan gateMsg),
	}
}

// Spec returns g.Def.
func (g *Gate) Spec() tools.Spec { return g.Def }

// Started delivers the call each Execute received, once it is running.
func (g *Gate) Started() <-chan tools.Call { return g.started }

// Execute announces the call and waits for instructions.
func (g *Gate) Execute(ctx context.Context, call tools.Call, update func(tools.Result)) (tools.Result, error) {
	select {
	case g.started <- call:
	case <-ctx.Done():
		return tools.Result{}, ctx.Err()
	}
	for {
		select {
		case m := <-g.msgs:
			if m.update != nil {
				update(*m.update)
				close(m.ack)
				continue
			}
			return m.result, m.err
		case <-ctx.Done():
			return tools.Result{}, ctx.Err()
		}
	}
}

// Update makes a waiting call report r as progress, and returns once the
// call's update callback has returned (so the update event was emitted).
// It blocks until a call is waiting.
func (g *Gate) Update(r tools.Result) {
	ack := make(chan struct{})
	g.msgs <- gateMsg{update: &r, ack: ack}
	<-ack
}

// Release makes a waiting call return r. It blocks until a call is waiting.
func (g *Gate) Release(r tools.Result) { g.msgs <- gateMsg{result: r} }

// Fail makes a waiting call return err. It blocks until a call is waiting.
func (g *Gate) Fail(err error) { g.msgs <- gateMsg{err: err} }
