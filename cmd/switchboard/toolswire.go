package main

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/egress"
)

// newTools builds the default agent's tool executor: the built-in tools
// and extra, narrowed by tools.allow and tools.deny, with tools.policies as
// its before_tool_call hook. exec and process join only when
// tools.exec.enabled is set. history still needs its Sessions (the
// runner); closeTools stops exec's background commands and releases the
// workspace.
func newTools(cfg *config.Config, workspace string, sessions core.SessionIndex, approvals *exectool.Approvals, log *slog.Logger, extra []tools.Tool) (
	exec *tools.Executor, history *tools.SessionsHistory, closeTools func() error, err error) {
	registry := tools.NewRegistry()
	registry.MustRegister(&tools.SessionsList{Sessions: sessions})
	history = &tools.SessionsHistory{}
	registry.MustRegister(history)
	// Model-chosen URLs go through the egress client only: public
	// addresses, checked at dial time on every redirect.
	registry.MustRegister(&tools.WebFetch{Client: egress.New(egress.Options{})})
	// read, write, edit, ls: inside the workspace only, through one os.Root
	// (it stays open for the life of the process).
	jail, err := tools.OpenJail(workspace)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	closeTools = jail.Close
	for _, t := range tools.FileTools(jail) {
		registry.MustRegister(t)
	}
	for _, t := range extra {
		registry.MustRegister(t)
	}
	if cfg.Tools.Exec.Enabled {
		x, err := exectool.New(cfg.Tools.Exec, jail, approvals)
		if err != nil {
			jail.Close()
			return nil, nil, nil, err
		}
		registry.MustRegister(x.Exec(), x.Process())
		closeTools = func() error {
			x.Close()
			return jail.Close()
		}
	}
	if len(cfg.Tools.Allow) > 0 {
		allow, _ := tools.ExpandNames(cfg.Tools.Allow)
		if !slices.Contains(allow, "*") {
			registry = registry.Only(allow...)
		}
	}
	deny, _ := tools.ExpandNames(cfg.Tools.Deny)
	if slices.Contains(deny, "*") {
		registry = tools.NewRegistry()
	} else {
		registry = registry.Without(deny...)
	}
	policy, err := tools.NewPolicy(cfg.Tools.Policies)
	if err != nil {
		closeTools()
		return nil, nil, nil, err
	}
	log.Debug("agent tools", "tools", strings.Join(registry.Names(), ","))
	exec = &tools.Executor{
		Registry: registry, Logger: log.With("component", "tools"),
		Hooks: tools.Hooks{Before: []tools.BeforeToolCall{policy.Hook()}},
	}
	if approvals != nil {
		// Elevated tools besides exec (which asks itself) wait for an
		// operator too; without approvals they are blocked.
		exec.Approve = approvals.ApproveCall
	}
	return exec, history, closeTools, nil
}

// checkWorkspace refuses a workspace that holds the configuration file or
// the state directory: the file tools could then rewrite the gateway's
// token, the owner list, the tool policy or the approvals' settings.
func checkWorkspace(workspace, stateDir, configPath string) error {
	ws := realOrClean(workspace)
	inside := func(p string) bool {
		p = realOrClean(p)
		return p == ws || strings.HasPrefix(p, ws+string(filepath.Separator))
	}
	if configPath != "" && inside(configPath) {
		return fmt.Errorf("agents.defaults.workspace %s holds the configuration file %s, which the agent's file tools could then change; "+
			"move the workspace or the configuration elsewhere", workspace, configPath)
	}
	if stateDir != "" && inside(stateDir) {
		return fmt.Errorf("agents.defaults.workspace %s holds the state directory %s (sessions, pairing, device tokens), which the agent's file tools could then change; "+
			"use a workspace inside or beside the state directory, not above it", workspace, stateDir)
	}
	return nil
}

// realOrClean is p's absolute real path, or its clean absolute form when
// it does not exist.
func realOrClean(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}
