package transcript_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

// goldenCase is one file of testdata/history (see its README).
type goldenCase struct {
	Step     string         `json:"step"`
	About    string         `json:"about"`
	Unsigned bool           `json:"unsigned"`
	Limit    int            `json:"limit"`
	Hidden   *bool          `json:"hidden"`
	Prune    *pruneArgs     `json:"prune"`
	Pipeline *pipelineArgs  `json:"pipeline"`
	Report   map[string]int `json:"report"`
	Input    core.Messages  `json:"input"`
	Want     core.Messages  `json:"want"`
}

type pruneArgs struct {
	SoftLimitTokens      int      `json:"softLimitTokens"`
	HardLimitTokens      int      `json:"hardLimitTokens"`
	SoftTrimChars        int      `json:"softTrimChars"`
	HeadChars            int      `json:"headChars"`
	TailChars            int      `json:"tailChars"`
	KeepLastAssistants   int      `json:"keepLastAssistants"`
	MinPrunableToolChars int      `json:"minPrunableToolChars"`
	PrunableTools        []string `json:"prunableTools"`
}

func (p *pruneArgs) options() transcript.PruneOptions {
	o := transcript.PruneOptions{
		SoftLimitTokens: p.SoftLimitTokens, HardLimitTokens: p.HardLimitTokens,
		SoftTrimChars: p.SoftTrimChars, HeadChars: p.HeadChars, TailChars: p.TailChars,
		KeepLastAssistants: p.KeepLastAssistants, MinPrunableToolChars: p.MinPrunableToolChars,
	}
	if p.PrunableTools != nil {
		tools := p.PrunableTools
		o.IsToolPrunable = func(name string) bool { return slices.Contains(tools, name) }
	}
	return o
}

type pipelineArgs struct {
	DropThinking         bool       `json:"dropThinking"`
	DropUnsignedThinking bool       `json:"dropUnsignedThinking"`
	HistoryLimit         int        `json:"historyLimit"`
	StrictAlternation    bool       `json:"strictAlternation"`
	Heartbeat            bool       `json:"heartbeat"`
	Prune                *pruneArgs `json:"prune"`
}

// The heartbeat rules of the golden files; the real ones live in the
// heartbeat package.
func testIsHeartbeatPrompt(text string) bool { return strings.HasPrefix(text, "Read HEARTBEAT.md") }
func testIsHeartbeatAck(text string) bool    { return strings.TrimSpace(text) == "HEARTBEAT_OK" }

func (p *pipelineArgs) options() transcript.PipelineOptions {
	o := transcript.PipelineOptions{
		DropThinking: p.DropThinking, DropUnsignedThinking: p.DropUnsignedThinking,
		HistoryLimit: p.HistoryLimit, StrictAlternation: p.StrictAlternation,
	}
	if p.Heartbeat {
		o.IsHeartbeatPrompt, o.IsHeartbeatAck = testIsHeartbeatPrompt, testIsHeartbeatAck
	}
	if p.Prune != nil {
		po := p.Prune.options()
		o.Prune = &po
	}
	return o
}

func loadGolden(t testing.TB) map[string]goldenCase {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "history", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	cases := map[string]goldenCase{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var gc goldenCase
		if err := json.Unmarshal(data, &gc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cases[strings.TrimSuffix(filepath.Base(f), ".json")] = gc
	}
	return cases
}

func TestHistoryGolden(t *testing.T) {
	steps := map[string]int{}
	for name, gc := range loadGolden(t) {
		steps[gc.Step]++
		t.Run(name, func(t *testing.T) {
			in := []core.Message(gc.Input)
			before := encode(t, in)
			var got []core.Message
			var rep transcript.PipelineReport
			switch gc.Step {
			case "context":
				got = transcript.ContextMessages(in)
			case "thinking":
				if gc.Unsigned {
					got = transcript.DropUnsignedThinking(in)
				} else {
					got = transcript.DropThinking(in)
				}
			case "pairing":
				got = transcript.RepairToolPairing(in)
			case "limit":
				got = transcript.LimitHistoryTurns(in, gc.Limit)
			case "hide":
				var hidden bool
				got, hidden = transcript.HideOrphanTrailingUser(in)
				if gc.Hidden == nil || hidden != *gc.Hidden {
					t.Errorf("hidden = %v, want %v", hidden, gc.Hidden)
				}
			case "merge":
				got = transcript.MergeConsecutive(in)
			case "heartbeat":
				got = transcript.FilterHeartbeatPairs(in, testIsHeartbeatPrompt, testIsHeartbeatAck)
			case "prune":
				got = transcript.Prune(in, gc.Prune.options())
			case "pipeline":
				got, rep = transcript.Pipeline(in, gc.Pipeline.options())
			default:
				t.Fatalf("unknown step %q", gc.Step)
			}
			if g, w := encode(t, got), encode(t, gc.Want); g != w {
				t.Errorf("%s\n got %s\nwant %s", gc.About, indent(g), indent(w))
			}
			if after := encode(t, in); after != before {
				t.Errorf("input was modified:\nbefore %s\nafter  %s", before, after)
			}
			if gc.Step == "pairing" || gc.Step == "pipeline" {
				if err := transcript.CheckToolPairing(got); err != nil {
					t.Errorf("output pairing: %v", err)
				}
			}
			rv := reflect.ValueOf(rep)
			for field, want := range gc.Report {
				f := rv.FieldByName(field)
				if !f.IsValid() {
					t.Fatalf("report has no field %s", field)
				}
				if got := int(f.Int()); got != want {
					t.Errorf("report.%s = %d, want %d", field, got, want)
				}
			}
		})
	}
	for _, s := range []string{"context", "thinking", "pairing", "limit", "hide", "merge", "heartbeat", "prune", "pipeline"} {
		if steps[s] == 0 {
			t.Errorf("no golden file for step %q", s)
		}
	}
}

// indent puts each message of a JSON array on its own line.
func indent(s string) string {
	var ms []json.RawMessage
	if json.Unmarshal([]byte(s), &ms) != nil {
		return s
	}
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("\n  ")
		b.Write(m)
	}
	return b.String()
}
