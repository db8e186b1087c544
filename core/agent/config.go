package agent

import (
	"context"
	"io/fs"
	"log/slog"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// Config is one agent's settings. Zero values are the documented defaults.
type Config struct {
	// AgentID names the agent; zero means core.DefaultAgentID.
	AgentID string
	// Model is the primary model and its fallbacks.
	Model core.ModelSelection
	// StateDir holds the transcripts (agents/<agentId>/sessions/).
	StateDir string
	// Workspace holds SOUL.md, AGENTS.md, USER.md, TOOLS.md and HEARTBEAT.md
	// for the system prompt. Nil means no workspace files.
	Workspace fs.FS
	// Identity is the first line of the system prompt; zero means the
	// prompt package's default.
	Identity string
	// Timeout bounds a whole turn, tool calls included. Zero means 48 hours.
	Timeout time.Duration
	// MaxIterations bounds the model calls of one turn, a guard against a
	// runaway tool loop. Zero means 64.
	MaxIterations int
	// HistoryLimits limit the user turns of history sent to the model, by
	// session key.
	HistoryLimits transcript.HistoryLimits
	// Prune trims old tool results before each model call; nil disables it.
	Prune *transcript.PruneOptions
	// ReserveTokens is kept free in the context window for the response;
	// compaction starts when the context estimate exceeds the window minus
	// this. Zero means 20000. A small window scales it down to a quarter
	// of the window.
	ReserveTokens int
	// KeepRecentTokens is how much recent history compaction keeps verbatim.
	// Zero means 20000. A small window scales it down to half of what the
	// reserve leaves, so compactions do not follow each other.
	KeepRecentTokens int
	// Heartbeat describes heartbeat turns, so their prompts and acks can be
	// recognised and filtered from history.
	Heartbeat HeartbeatConfig
	// Location is the time zone of system-event timestamps; nil means UTC.
	Location *time.Location
	// MaxCachedSessions caps the sessions kept warm between turns (index
	// entry and open transcript, about 1.15× the transcript's size in
	// memory). Zero means 256; a negative value disables the cache.
	MaxCachedSessions int
	// MaxCachedBytes caps the transcript bytes the warm sessions hold
	// together (transcript.File.Held: since a compaction, only what the
	// context is built from), so memory stays bounded however many
	// sessions are busy. Zero
	// means 16 MiB; the session just used stays even when it alone is
	// larger.
	MaxCachedBytes int64
}

// HeartbeatConfig is what the agent needs to know about heartbeats.
type HeartbeatConfig struct {
	// Enabled adds the heartbeat section to the system prompt.
	Enabled bool
	// Prompt is the heartbeat prompt; turns starting with it are heartbeat
	// polls.
	Prompt string
	// AckMaxChars is how much text may accompany HEARTBEAT_OK and still
	// count as an ack. Zero means 300.
	AckMaxChars int
}

// Models is what the runner needs of the model layer; *llm.Router
// implements it.
type Models interface {
	// Resolve returns the provider and model settings of a
	// "<provider>/<model>" reference.
	Resolve(ref string) (llm.Provider, llm.ModelConfig, error)
	// Stream calls the first model of refs that answers, with retries and
	// fallbacks.
	Stream(ctx context.Context, refs []string, req *llm.Request, emit func(core.AssistantMessageEvent)) (*core.AssistantMessage, error)
}

// Deps are the runner's collaborators.
type Deps struct {
	// Models calls the models.
	Models Models
	// Tools runs tool calls; nil means the agent has no tools.
	Tools *tools.Executor
	// Sessions is the sessions index.
	Sessions core.SessionIndex
	// Logger receives the runner's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// NewID makes run and session ids; nil means transcript.NewSessionID.
	NewID func() string
	// Transcript configures transcript files (NoSync is for benchmarks).
	Transcript transcript.Options
	// Transcripts keeps the transcripts; nil means JSONL files in the
	// state directory (transcript.Files with Transcript as options).
	// store/postgres keeps them in the database for a cluster.
	Transcripts transcript.Store
}

// transcripts is Transcripts or the files under stateDir.
func (d Deps) transcripts(stateDir string) transcript.Store {
	if d.Transcripts != nil {
		return d.Transcripts
	}
	return transcript.Files{StateDir: stateDir, Options: d.Transcript}
}

func (c Config) withDefaults() Config {
	if c.AgentID == "" {
		c.AgentID = core.DefaultAgentID
	}
	c.AgentID = core.NormalizeAgentID(c.AgentID)
	if c.Timeout <= 0 {
		c.Timeout = 48 * time.Hour
	}
	if c.MaxIterations <= 0 {
		c.MaxIterations = 64
	}
	if c.ReserveTokens <= 0 {
		c.ReserveTokens = 20000
	}
	if c.KeepRecentTokens <= 0 {
		c.KeepRecentTokens = 20000
	}
	if c.Heartbeat.AckMaxChars <= 0 {
		c.Heartbeat.AckMaxChars = 300
	}
	if c.Location == nil {
		c.Location = time.UTC
	}
	if c.MaxCachedSessions == 0 {
		c.MaxCachedSessions = 256
	}
	if c.MaxCachedBytes <= 0 {
		c.MaxCachedBytes = 16 << 20
	}
	return c
}
