package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
)

// Use is what a configuration is read for, which decides whether the API
// keys of the models it uses must be ready (issue 26, finding 5: an empty
// key passed `config check`, and the commands that manage the daemon
// refused to run without a key they never use).
type Use int

const (
	// ForRun reads a configuration to answer messages: `switchboard run`,
	// `agent`, `config check`, a configuration written over the gateway.
	// Each provider a model reference uses must have the key its endpoint
	// needs (llm.ProviderConfig.KeyRequired), and no provider's apiKey may
	// reference an unset variable without a default.
	ForRun Use = iota
	// ForManagement reads it for a command that manages the daemon or its
	// state and calls no model (gateway token, cron, pairing, devices): a
	// provider's apiKey may reference unset variables, which read as
	// empty, and is not checked.
	ForManagement
)

// isModelKeyPath reports whether path is models.providers.<name>.apiKey,
// whose variables only a process that calls models needs.
func isModelKeyPath(path string) bool {
	rest, ok := strings.CutPrefix(path, "models.providers.")
	if !ok {
		return false
	}
	name, ok := strings.CutSuffix(rest, ".apiKey")
	return ok && name != "" && !strings.ContainsAny(name, ".[")
}

// modelUse is a model reference in the configuration: where, and which.
type modelUse struct {
	path, ref string
}

// modelUses lists the model references of c, in key order: the agent's
// primary and fallbacks, heartbeat models, cron job models.
func (c Config) modelUses() []modelUse {
	var out []modelUse
	add := func(path, ref string) {
		if ref != "" {
			out = append(out, modelUse{path: path, ref: ref})
		}
	}
	add("agents.defaults.model.primary", c.Agents.Defaults.Model.Primary)
	for i, fb := range c.Agents.Defaults.Model.Fallbacks {
		add(fmt.Sprintf("agents.defaults.model.fallbacks[%d]", i), fb)
	}
	add("agents.defaults.heartbeat.model", c.Agents.Defaults.Heartbeat.Model)
	for i, a := range c.Agents.List {
		if a.Heartbeat != nil {
			add(fmt.Sprintf("agents.list[%d].heartbeat.model", i), a.Heartbeat.Model)
		}
	}
	for i, j := range c.Cron.Jobs {
		add(fmt.Sprintf("cron.jobs[%d].payload.model", i), j.Payload.Model)
	}
	return out
}

// checkModelKeys reports, at each provider's apiKey, a key that a model
// reference needs and that is empty, and any unset variable an apiKey
// references without a default (as the decoder would have, had it not
// deferred them: seen holds what each apiKey referenced).
func (c Config) checkModelKeys(lookup LookupEnv, seen map[string]envValue, report func(path, msg string)) {
	users := map[string]modelUse{}
	for _, u := range c.modelUses() {
		if r, err := core.ParseModelRef(u.ref); err == nil {
			if _, ok := users[r.Provider]; !ok {
				users[r.Provider] = u
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Models.Providers)) {
		p := c.Models.Providers[name]
		path := "models.providers." + name + ".apiKey"
		v := seen[path]
		u, used := users[name]
		switch {
		case v.malformed:
		case used && p.API != llm.APIEcho && p.API != "" && (v.err != nil || p.APIKey == "" && p.KeyRequired()):
			report(path, missingKeyMessage(p, u, v.names, lookup))
		case v.err != nil:
			report(path, v.err.Error())
		}
	}
}

// missingKeyMessage says why provider p's key is missing, who needs it, and
// what to do: export the variable, or choose a model that needs no key.
func missingKeyMessage(p llm.ProviderConfig, u modelUse, names []string, lookup LookupEnv) string {
	var unset, empty []string
	for _, n := range names {
		switch v, ok := lookup(n); {
		case !ok:
			unset = append(unset, n)
		case v == "":
			empty = append(empty, n)
		}
	}
	var why []string
	if len(unset) > 0 {
		why = append(why, fmt.Sprintf("%s %s not set", strings.Join(unset, " and "), isAre(unset)))
	}
	if len(empty) > 0 {
		why = append(why, fmt.Sprintf("%s %s empty", strings.Join(empty, " and "), isAre(empty)))
	}
	var b strings.Builder
	if len(why) > 0 {
		b.WriteString(strings.Join(why, ", "))
	} else {
		b.WriteString("no key is written here")
	}
	if host := p.VendorHost(); host != "" && p.KeyRequired() {
		fmt.Fprintf(&b, ", and %s refuses requests without one", host)
	}
	fmt.Fprintf(&b, "; %s uses this provider (%s): ", u.path, u.ref)
	vars := append(unset, empty...)
	if len(vars) == 0 {
		v := p.KeyVariable() // only a vendor's endpoint gets here
		fmt.Fprintf(&b, "write apiKey: ${%s} and export %s=<your key> before starting Switchboard", v, v)
	} else {
		exports := make([]string, len(vars))
		for i, v := range vars {
			exports[i] = v + "=<your key>"
		}
		fmt.Fprintf(&b, "export %s before starting Switchboard", strings.Join(exports, " "))
		if !p.KeyRequired() {
			fmt.Fprintf(&b, " (or write ${%s:-} if the server needs no key)", vars[0])
		}
	}
	fmt.Fprintf(&b, `, or point %s at another model ("echo/echo" needs no key)`, u.path)
	return b.String()
}

func isAre(s []string) string {
	if len(s) == 1 {
		return "is"
	}
	return "are"
}
