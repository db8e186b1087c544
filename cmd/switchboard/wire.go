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
)

// newRunner builds the agent runner from the configuration: the model
// router, the tool executor and the workspace. sessions is the sessions
// index (the state store).
func newRunner(cfg *config.Config, stateDir, home string, sessions core.SessionIndex, log *slog.Logger) (*agent.Runner, error) {
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
	registry := tools.NewRegistry()
	registry.MustRegister(&tools.SessionsList{Sessions: sessions})
	r, err := agent.New(agent.Config{
		Model:     d.Model,
		StateDir:  stateDir,
		Workspace: os.DirFS(workspace),
		Timeout:   secondsDuration(d.TimeoutSeconds),
	}, agent.Deps{
		Models:   router,
		Tools:    &tools.Executor{Registry: registry, Logger: log.With("component", "tools")},
		Sessions: sessions,
		Logger:   log.With("component", "agent"),
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

func secondsDuration(s int) time.Duration { return time.Duration(s) * time.Second }
