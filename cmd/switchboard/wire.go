package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/heartbeat"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// runnerOptions is what newRunner needs besides the configuration.
type runnerOptions struct {
	stateDir, home, configPath string
	// approvals receives exec's approval requests; nil refuses every
	// command that needs one.
	approvals *exectool.Approvals
	// extra tools (the cron and message tools) join the built-in ones.
	extra []tools.Tool
}

// newRunner builds the agent runner from the configuration: the model
// router, the tools (tools.allow/deny, tools.policies, tools.exec) and the
// workspace. sessions is the sessions index (the state store). The
// returned func stops what the tools left running (exec's background
// commands).
func newRunner(cfg *config.Config, sessions core.SessionIndex, log *slog.Logger, o runnerOptions) (*agent.Runner, func() error, error) {
	router, err := llm.NewRouter(cfg.Models, llm.RouterOptions{Logger: log.With("component", "llm")})
	if err != nil {
		return nil, nil, fmt.Errorf("models: %w", err)
	}
	workspace, err := cfg.ResolveWorkspace(o.stateDir, o.home)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(workspace, 0o700); err != nil {
		return nil, nil, fmt.Errorf("workspace %s: %w", workspace, err)
	}
	if err := checkWorkspace(workspace, o.stateDir, o.configPath); err != nil {
		return nil, nil, err
	}
	d := cfg.Agents.Defaults
	hbCfg := agentHeartbeat(cfg)
	hbEvery, _ := hbCfg.Interval()
	loc, err := userLocation(cfg)
	if err != nil {
		return nil, nil, err
	}
	exec, history, closeTools, err := newTools(cfg, workspace, sessions, o.approvals, log, o.extra)
	if err != nil {
		return nil, nil, err
	}
	// With the database store, transcripts live there too, and no session
	// is kept warm between turns: another instance may run its next turn.
	var transcripts transcript.Store
	cached := 0
	if pg, ok := sessions.(*postgres.Store); ok {
		transcripts, cached = pg.Transcripts(), -1
	}
	r, err := agent.New(agent.Config{
		MaxCachedSessions: cached,
		Model:             d.Model,
		StateDir:          o.stateDir,
		Workspace:         os.DirFS(workspace),
		Timeout:           secondsDuration(d.TimeoutSeconds),
		Location:          loc,
		Heartbeat: agent.HeartbeatConfig{
			Enabled: hbEvery > 0, Prompt: hbCfg.Prompt, AckMaxChars: hbCfg.AckMaxChars,
		},
	}, agent.Deps{
		Models:      router,
		Tools:       exec,
		Sessions:    sessions,
		Transcripts: transcripts,
		Logger:      log.With("component", "agent"),
	})
	if err != nil {
		closeTools()
		return nil, nil, err
	}
	history.Sessions = r
	return r, closeTools, nil
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
// keeps its schedule across restarts; instances of a cluster share one
// phase and claim each beat (claim), so it runs once.
func newHeartbeat(cfg *config.Config, w wiring, deps heartbeat.Deps, claim func(context.Context, time.Time) bool, log *slog.Logger) (*heartbeat.Runner, error) {
	workspace, err := cfg.ResolveWorkspace(w.stateDir, w.home)
	if err != nil {
		return nil, err
	}
	loc, err := userLocation(cfg)
	if err != nil {
		return nil, err
	}
	seed := w.stateDir
	if claim != nil {
		seed = "cluster"
	}
	return heartbeat.New(heartbeat.Options{
		Claim:        claim,
		Config:       agentHeartbeat(cfg),
		Seed:         seed,
		Workspace:    os.DirFS(workspace),
		UserLocation: loc,
		Clock:        w.clock,
		Logger:       log.With("component", "heartbeat"),
	}, deps)
}
