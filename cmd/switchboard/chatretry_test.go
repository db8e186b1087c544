package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// dial connects a gateway client to the daemon with the given scopes.
func (d *runningDaemon) dial(t *testing.T, ctx context.Context, scopes ...string) *client.Client {
	t.Helper()
	tok := newTestCLI(d.env)
	tok.run("gateway", "token", "--config", d.cfg)
	c, err := client.Dial(ctx, client.Options{URL: strings.Replace(d.base, "http", "ws", 1) + "/", Token: strings.TrimSpace(tok.out.String()),
		Scopes: scopes})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Issue 22, finding 9: the gateway's idempotency cache lives in memory and
// the journal's dedupe key survives a restart, so a client that retried
// chat.send after the daemon restarted got "in_flight" for a message whose
// answer had already gone out, and never a final. The retry now gets the
// stored outcome.
func TestFinding9_ChatSendRetryAfterRestartGetsTheOutcome(t *testing.T) {
	model := llmtest.NewAnthropicServer(t, llmtest.Text("The answer."))
	d := startDaemon(t, model, nil, "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	send := func(c *client.Client) map[string]any {
		t.Helper()
		raw, err := c.Call(ctx, "chat.send", map[string]any{"sessionKey": "main", "message": "a question", "idempotencyKey": "retry-1"})
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}

	c := d.dial(t, ctx, protocol.ScopeRead, protocol.ScopeWrite)
	if got := send(c); got["status"] != "started" {
		t.Fatalf("first chat.send = %v", got)
	}
	if _, err := c.Next(ctx, func(e client.Event) bool {
		return e.Name == "chat" && strings.Contains(string(e.Payload), `"state":"final"`)
	}); err != nil {
		t.Fatalf("no final: %v", err)
	}
	c.Close()
	d.stop(t)

	d = launchDaemon(t, d.cfg, d.env, d.setup)
	c = d.dial(t, ctx, protocol.ScopeRead, protocol.ScopeWrite)
	defer c.Close()
	got := send(c)
	if got["status"] != "ok" || got["runId"] != "retry-1" {
		t.Fatalf("chat.send retried after a restart = %v, want the stored outcome (status ok)", got)
	}
	if n := len(model.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
	// The same answer again, from the idempotency cache this time.
	if again := send(c); again["status"] != "ok" {
		t.Errorf("a second retry = %v", again)
	}
	d.stop(t)
}
