package agent_test

import (
	"os"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// The warm-session cache is bounded by bytes as well as by count: once the
// sessions' transcripts together pass MaxCachedBytes, the least recently
// used is closed and its next turn reads the transcript from disk again.
// A line written to the file behind the runner's back shows which: a warm
// session does not see it, an evicted one does.
func TestWarmSessionsAreBoundedByBytes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxBytes int64
		reloaded bool
	}{
		{"under the cap: stays warm", 1 << 20, false},
		{"over the cap: evicted", 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOptions{
				cfg:    agent.Config{MaxCachedBytes: tc.maxBytes},
				script: []llmtest.Response{llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three")},
			})
			h.run(dm("first"), nil)
			// Another session's turn: with a one-byte cap, the first
			// session is the least recently used and goes.
			other := dm("elsewhere")
			other.SessionKey, other.Route.To, other.Sender.ID = "agent:main:telegram:direct:7", "7", "7"
			h.run(other, nil)

			path, err := transcript.Path(h.dir, "main", h.entry(dmKey).SessionID)
			if err != nil {
				t.Fatal(err)
			}
			// A copy of the first exchange with other words.
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var line string
			for _, l := range strings.Split(string(data), "\n") {
				if strings.Contains(l, `"role":"user"`) || strings.Contains(l, `"role":"assistant"`) {
					l = strings.Replace(l, "first", "WRITTEN-BEHIND", 1)
					line += strings.Replace(l, `"one"`, `"WRITTEN-BEHIND"`, 1) + "\n"
				}
			}
			if !strings.Contains(line, "WRITTEN-BEHIND") {
				t.Fatalf("no exchange in %s", data)
			}
			f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString(line); err != nil {
				t.Fatal(err)
			}
			f.Close()

			h.run(dm("second"), nil)
			reqs := h.server.Requests()
			saw := strings.Contains(string(reqs[len(reqs)-1].Body), "WRITTEN-BEHIND")
			if saw != tc.reloaded {
				t.Fatalf("the third turn saw the line written behind the runner: %v, want %v", saw, tc.reloaded)
			}
		})
	}
}
