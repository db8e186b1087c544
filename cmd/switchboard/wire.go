package main

import (
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/egress"
	"github.com/switchboardhq/switchboard/heartbeat"
)

// newRunner builds the agent runner from the configuration: the model
// router, the tool executor and the workspace. sessions is the sessions
// index (the state store); extra tools (the cron tool) join the built-in
// ones.
func newRunner(cfg *config.Config, stateDir, home string, sessions core.SessionIndex, log *slog.Logger, extra ...tools.Tool) (*agent.Runner, error) {
	router, err := llm.NewRouter(cfg.Models, llm.RouterOptions{Logger: log.With("component", "llm")})
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	workspace, err := cfg.ResolveWorkspace(stateDir, home)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	d := cfg.Agents.Defaults
	hbCfg := agentHeartbeat(cfg)
	hbEvery, _ := hbCfg.Interval()
	loc, err := userLocation(cfg)
	if err != nil {
		return nil, err
	}
	registry := tools.NewRegistry()
	registry.MustRegister(&tools.SessionsList{Sessions: sessions})
	history := &tools.SessionsHistory{} // reads through the runner, set below
	registry.MustRegister(history)
	// Model-chosen URLs go through the egress client only: public
	// addresses, checked at dial time on every redirect.
	registry.MustRegister(&tools.WebFetch{Client: egress.New(egress.Options{})})
	// read, write, edit, ls: inside the workspace only, through one os.Root
	// (it stays open for the life of the process).
	jail, err := tools.OpenJail(workspace)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	for _, t := range tools.FileTools(jail) {
		registry.MustRegister(t)
	}
	for _, t := range extra {
		registry.MustRegister(t)
	}
	r, err := agent.New(agent.Config{
		Model:     d.Model,
		StateDir:  stateDir,
		Workspace: os.DirFS(workspace),
		Timeout:   secondsDuration(d.TimeoutSeconds),
		Location:  loc,
		Heartbeat: agent.HeartbeatConfig{
			Enabled: hbEvery > 0, Prompt: hbCfg.Prompt, AckMaxChars: hbCfg.AckMaxChars,
		},
	}, agent.Deps{
		Models:   router,
		Tools:    &tools.Executor{Registry: registry, Logger: log.With("component", "tools")},
		Sessions: sessions,
		Logger:   log.With("component", "agent"),
	})
	if err != nil {
		return nil, err
	}
	history.Sessions = r
	return r, nil
}

func secondsDuration(s int) time.Duration { return time.Duration(s) * time.Second }

// userLocation is agents.defaults.userTimezone; nil means the host's zone.
func userLocation(cfg *config.Config) (*time.Location, error) {
	tz := cfg.Agents.Defaults.UserTimezone
	if tz == "" {
		return nil, nil
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("agents.defaults.userTimezone %q: %w", tz, err)
	}
	return loc, nil
}

// agentHeartbeat is the default agent's heartbeat: agents.defaults with
// its agents.list entry merged over it; off ("0m") when another agent has a
// heartbeat and it has none.
func agentHeartbeat(cfg *config.Config) core.HeartbeatConfig {
	h, ok := cfg.Agents.Heartbeats([]string{core.DefaultAgentID})[core.DefaultAgentID]
	if !ok {
		return core.HeartbeatConfig{Every: "0m"}
	}
	return h
}

// newHeartbeat builds the default agent's heartbeat runner. Its phase seed
// is the state directory, so installs spread differently but one install
// keeps its schedule across restarts.
func newHeartbeat(cfg *config.Config, w wiring, deps heartbeat.Deps, log *slog.Logger) (*heartbeat.Runner, error) {
	workspace, err := cfg.ResolveWorkspace(w.stateDir, w.home)
	if err != nil {
		return nil, err
	}
	loc, err := userLocation(cfg)
	if err != nil {
		return nil, err
	}
	return heartbeat.New(heartbeat.Options{
		Config:       agentHeartbeat(cfg),
		Seed:         w.stateDir,
		Workspace:    os.DirFS(workspace),
		UserLocation: loc,
		Clock:        w.clock,
		Logger:       log.With("component", "heartbeat"),
	}, deps)
}
