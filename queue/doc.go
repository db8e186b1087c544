// Package queue will hold the Dispatcher: the only path by which a turn runs.
// It journals every inbound message durably, runs at most one turn per session
// key, applies the queue modes (steer, followup, collect, interrupt and
// steer-backlog) with their debounce, cap and drop policy, and feeds queued
// system events into the next prompt.
//
// Until the dispatcher lands this package is intentionally empty.
package queue
