package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Sentinel errors of Register; the returned error wraps one of them and
// names the tool and what is wrong.
var (
	// ErrInvalidSpec means a tool's Spec breaks a rule of Register.
	ErrInvalidSpec = errors.New("invalid tool spec")
	// ErrDuplicateTool means a tool of the same name is already registered.
	ErrDuplicateTool = errors.New("duplicate tool name")
)

// namePattern is the rule for Spec.Name: what every provider accepts as a
// function name, restricted to one spelling so names are unambiguous.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// defaultParameters is the schema of a tool that declares none.
var defaultParameters = json.RawMessage(`{"type":"object","properties":{}}`)

// Registry is a set of tools keyed by name. Register and MustRegister may
// be called while other goroutines read, but the usual shape is to register
// everything at startup and share the registry read-only afterwards.
// Without and Only return independent snapshots, one per agent.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]*entry
}

// entry is one registered tool with its schema parsed once, so the
// executor does not decode JSON Schema on every call.
type entry struct {
	tool   Tool
	spec   Spec
	schema *schemaInfo
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{entries: make(map[string]*entry)}
}

// Register validates t's Spec and adds it. The name must match
// ^[a-z][a-z0-9_]{0,63}$ and be new to the registry, the description must
// not be blank, the timeout must not be negative, and Parameters must be a
// JSON Schema object with "type":"object" (nil means an object without
// properties). The error wraps ErrInvalidSpec or ErrDuplicateTool.
func (r *Registry) Register(t Tool) error {
	if t == nil {
		return fmt.Errorf("tools: register: %w: nil tool", ErrInvalidSpec)
	}
	spec := t.Spec()
	schema, params, err := validateSpec(spec)
	if err != nil {
		return err
	}
	spec.Parameters = params
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = make(map[string]*entry)
	}
	if _, dup := r.entries[spec.Name]; dup {
		return fmt.Errorf("tools: register %q: %w: a tool of that name is already registered", spec.Name, ErrDuplicateTool)
	}
	r.entries[spec.Name] = &entry{tool: t, spec: spec, schema: schema}
	return nil
}

// MustRegister registers each tool and panics on the first error; it is
// for wiring code where a bad built-in tool is a programming error.
func (r *Registry) MustRegister(ts ...Tool) {
	for _, t := range ts {
		if err := r.Register(t); err != nil {
			panic(err)
		}
	}
}

// validateSpec checks spec and returns its parsed schema and the
// Parameters to store (a private copy, or the default).
func validateSpec(spec Spec) (*schemaInfo, json.RawMessage, error) {
	if !namePattern.MatchString(spec.Name) {
		return nil, nil, fmt.Errorf("tools: register %q: %w: name must match %s (lowercase letters, digits, _; at most 64 characters)",
			spec.Name, ErrInvalidSpec, namePattern)
	}
	if strings.TrimSpace(spec.Description) == "" {
		return nil, nil, fmt.Errorf("tools: register %q: %w: description is empty; tell the model what the tool does", spec.Name, ErrInvalidSpec)
	}
	if spec.Timeout < 0 {
		return nil, nil, fmt.Errorf("tools: register %q: %w: timeout %v is negative", spec.Name, ErrInvalidSpec, spec.Timeout)
	}
	params := defaultParameters
	if len(bytes.TrimSpace(spec.Parameters)) > 0 {
		params = bytes.Clone(spec.Parameters)
	}
	schema, err := parseSchema(params)
	if err != nil {
		return nil, nil, fmt.Errorf("tools: register %q: %w: parameters: %w", spec.Name, ErrInvalidSpec, err)
	}
	return schema, params, nil
}

// Get returns the tool registered under name and its Spec as stored (with
// default Parameters filled in).
func (r *Registry) Get(name string) (Tool, Spec, bool) {
	e := r.get(name)
	if e == nil {
		return nil, Spec{}, false
	}
	return e.tool, e.spec, true
}

func (r *Registry) get(name string) *entry {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	e := r.entries[name]
	r.mu.RUnlock()
	return e
}

// Specs returns the Specs of all tools sorted by name, the tool list sent
// to the model.
func (r *Registry) Specs() []Spec {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	specs := make([]Spec, 0, len(r.entries))
	for _, e := range r.entries {
		specs = append(specs, e.spec)
	}
	r.mu.RUnlock()
	slices.SortFunc(specs, func(a, b Spec) int { return strings.Compare(a.Name, b.Name) })
	return specs
}

// Names returns the registered tool names, sorted.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	names := make([]string, 0, len(r.entries))
	for name := range r.entries {
		names = append(names, name)
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.entries)
}

// Without returns a new registry holding every tool except the named ones,
// for an agent with some tools disabled. Names that are not registered are
// ignored. The result is a snapshot: later registrations in r do not
// appear in it.
func (r *Registry) Without(names ...string) *Registry {
	return r.filter(func(name string) bool { return !slices.Contains(names, name) })
}

// Only returns a new registry holding just the named tools, for an agent
// with an allowlist. Names that are not registered are ignored (compare
// with Names to report typos). The result is a snapshot like Without's.
func (r *Registry) Only(names ...string) *Registry {
	return r.filter(func(name string) bool { return slices.Contains(names, name) })
}

func (r *Registry) filter(keep func(string) bool) *Registry {
	out := NewRegistry()
	if r == nil {
		return out
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for name, e := range r.entries {
		if keep(name) {
			out.entries[name] = e
		}
	}
	return out
}
