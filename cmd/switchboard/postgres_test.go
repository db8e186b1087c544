package main

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/transcript"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/internal/pgtest"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// With store.driver postgres, `switchboard run` keeps its state in the
// database: a chat is answered, and after a restart the session, its
// history and the journal are there; no state.db is made.
func TestRunKeepsStateInPostgres(t *testing.T) {
	url := pgtest.Database(t)
	model := llmtest.NewAnthropicServer(t, llmtest.Text("First answer."), llmtest.Text("Second answer."))
	d := startDaemon(t, model, nil, "store:\n  driver: postgres\n  url: "+url+"\n")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ask := func(c *client.Client, msg, id, want string) {
		t.Helper()
		if _, err := c.Call(ctx, "chat.send", map[string]any{"sessionKey": "main", "message": msg, "idempotencyKey": id}); err != nil {
			t.Fatal(err)
		}
		ev, err := c.Next(ctx, func(e client.Event) bool {
			return e.Name == "chat" && strings.Contains(string(e.Payload), `"state":"final"`) && strings.Contains(string(e.Payload), id)
		})
		if err != nil {
			t.Fatalf("no final for %s: %v", id, err)
		}
		if !strings.Contains(string(ev.Payload), want) {
			t.Fatalf("final = %s, want %q", ev.Payload, want)
		}
	}
	c := d.dial(t, ctx, protocol.ScopeRead, protocol.ScopeWrite)
	ask(c, "first question", "pg-1", "First answer.")
	c.Close()
	d.stop(t)

	d = launchDaemon(t, d.cfg, d.env, d.setup)
	c = d.dial(t, ctx, protocol.ScopeRead, protocol.ScopeWrite)
	defer c.Close()
	raw, err := c.Call(ctx, "sessions.list", map[string]any{})
	if err != nil || !strings.Contains(string(raw), "agent:main:main") {
		t.Fatalf("sessions.list after a restart = %s, %v", raw, err)
	}
	ask(c, "second question", "pg-2", "Second answer.")
	raw, err = c.Call(ctx, "chat.history", map[string]any{"sessionKey": "main"})
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(raw, &h); err != nil || len(h.Messages) != 4 {
		t.Fatalf("chat.history after a restart: %d messages (%v), want both turns", len(h.Messages), err)
	}
	d.stop(t)

	st, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if pending, err := st.PendingJournal(ctx); err != nil || len(pending) != 0 {
		t.Errorf("pending journal entries after both answers: %v, %v", pending, err)
	}
	if e, ok, err := st.GetSession(ctx, "agent:main:main"); !ok || err != nil || e.SessionID == "" {
		t.Errorf("the session in the database: %+v, %v, %v", e, ok, err)
	}
	stateDir := filepath.Join(filepath.Dir(d.cfg), "state")
	if _, err := os.Stat(filepath.Join(stateDir, "state.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a SQLite state.db was made in postgres mode: %v", err)
	}
	// The transcript is in the database, not in the state directory, and
	// transcripts export writes it in the files' JSONL form.
	if files, _ := filepath.Glob(filepath.Join(stateDir, "agents", "*", "sessions", "*.jsonl")); len(files) != 0 {
		t.Errorf("transcript files in postgres mode: %v", files)
	}
	out := t.TempDir()
	tc := d.cli()
	if code := tc.run("transcripts", "export", "--config", d.cfg, "--session", "main", "--out", out); code != exitOK {
		t.Fatalf("transcripts export: exit %d: %s", code, tc.err.String())
	}
	e, _, _ := st.GetSession(ctx, "agent:main:main")
	path, err := transcript.Path(out, "main", e.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := transcript.Read(path)
	if err != nil || len(msgs) != 4 {
		t.Fatalf("exported transcript %s: %d messages, %v; want both turns", path, len(msgs), err)
	}
	if u, ok := msgs[0].(*core.UserMessage); !ok || !strings.Contains(u.Text(), "first question") {
		t.Errorf("exported first message = %#v", msgs[0])
	}
}
