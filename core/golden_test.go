package core_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// goldenKind says which decoder a golden file is for.
type goldenKind int

const (
	goldenMessage goldenKind = iota
	goldenAssistantEvent
	goldenAgentEvent
	goldenEnvelope
)

// goldenFiles lists every file under testdata/seed000 and testdata/seed002
// with its decoder; the READMEs there say where each comes from.
var goldenFiles = map[string]goldenKind{
	"seed000/3.1-user-text.json":                 goldenMessage,
	"seed000/3.1-user-images.json":               goldenMessage,
	"seed000/3.2-assistant-text.json":            goldenMessage,
	"seed000/3.2-assistant-tool-calls.json":      goldenMessage,
	"seed000/3.3-tool-result-success.json":       goldenMessage,
	"seed000/3.3-tool-result-error.json":         goldenMessage,
	"seed000/6-transcript.jsonl":                 goldenMessage,
	"seed000/5.1-assistant-message-events.jsonl": goldenAssistantEvent,
	"seed000/5.2-agent-events.jsonl":             goldenAgentEvent,
	"seed002/2.1-assistant-tool-call.json":       goldenMessage,
	"seed002/2.2-toolcall-events.jsonl":          goldenAssistantEvent,
	"seed002/3.1-tool-result.json":               goldenMessage,
	"seed002/3.2-tool-result-error.json":         goldenMessage,
	"seed002/3.3-tool-result-image.json":         goldenMessage,
	"seed002/8.1-error-envelope.json":            goldenEnvelope,
	"seed002/8.2-blocked-envelope.json":          goldenEnvelope,
	"seed002/8.3-pending-envelope.json":          goldenEnvelope,
}

// goldenDocs returns the JSON documents of a golden file: the file itself,
// or each line of a .jsonl file.
func goldenDocs(t testing.TB, name string) [][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".jsonl") {
		return [][]byte{data}
	}
	var docs [][]byte
	for line := range bytes.Lines(data) {
		if line = bytes.TrimSpace(line); len(line) > 0 {
			docs = append(docs, line)
		}
	}
	return docs
}

func TestGoldenFilesAreAllListed(t *testing.T) {
	var onDisk []string
	for _, dir := range []string{"seed000", "seed002"} {
		entries, err := os.ReadDir(filepath.Join("testdata", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Name() != "README.md" {
				onDisk = append(onDisk, dir+"/"+e.Name())
			}
		}
	}
	var listed []string
	for name := range goldenFiles {
		listed = append(listed, name)
	}
	slices.Sort(onDisk)
	slices.Sort(listed)
	if !slices.Equal(onDisk, listed) {
		t.Errorf("golden files on disk and in goldenFiles differ:\n on disk: %q\n listed:  %q", onDisk, listed)
	}
}

func TestGoldenRoundTrip(t *testing.T) {
	for name, kind := range goldenFiles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for i, doc := range goldenDocs(t, name) {
				got, err := roundTrip(t, kind, doc)
				if err != nil {
					t.Fatalf("document %d: %v", i, err)
				}
				if diff := jsonDiff(doc, got); diff != "" {
					t.Errorf("document %d: re-encoded JSON differs from the golden file:\n%s\ngot: %s", i, diff, got)
				}
			}
		})
	}
}

// roundTrip decodes doc with the decoder for kind and encodes the result
// with json.Marshal. It fails the test if the decoder fell back to a raw or
// extra-field representation, which would make the round trip trivial.
func roundTrip(t *testing.T, kind goldenKind, doc []byte) ([]byte, error) {
	t.Helper()
	switch kind {
	case goldenMessage:
		m, err := core.UnmarshalMessage(doc)
		if err != nil {
			return nil, err
		}
		requireFullyKnown(t, m)
		return json.Marshal(m)
	case goldenAssistantEvent:
		var e core.AssistantMessageEvent
		if err := json.Unmarshal(doc, &e); err != nil {
			return nil, err
		}
		if e.Raw != nil {
			t.Errorf("event %q decoded as unknown", e.Type)
		}
		return json.Marshal(&e)
	case goldenAgentEvent:
		var e core.AgentEvent
		if err := json.Unmarshal(doc, &e); err != nil {
			return nil, err
		}
		if e.Raw != nil {
			t.Errorf("event %q decoded as unknown", e.Type)
		}
		return json.Marshal(&e)
	case goldenEnvelope:
		var e core.ToolEnvelope
		if err := json.Unmarshal(doc, &e); err != nil {
			return nil, err
		}
		return json.Marshal(e)
	}
	return nil, fmt.Errorf("unknown kind %d", kind)
}

// requireFullyKnown fails if m or one of its blocks decoded to a raw or
// extra-field form: the seeds only use members this package knows.
func requireFullyKnown(t *testing.T, m core.Message) {
	t.Helper()
	var content core.Content
	switch m := m.(type) {
	case *core.UserMessage:
		if m.Extra != nil {
			t.Errorf("user message has unknown members %v", keysOf(m.Extra))
		}
		content = m.Content.Blocks
	case *core.AssistantMessage:
		if m.Extra != nil {
			t.Errorf("assistant message has unknown members %v", keysOf(m.Extra))
		}
		content = m.Content
	case *core.ToolResultMessage:
		if m.Extra != nil {
			t.Errorf("tool result has unknown members %v", keysOf(m.Extra))
		}
		content = m.Content
	default:
		t.Errorf("decoded as %T", m)
	}
	for i, blk := range content {
		var extra map[string]json.RawMessage
		switch b := blk.(type) {
		case *core.TextContent:
			extra = b.Extra
		case *core.ThinkingContent:
			extra = b.Extra
		case *core.ImageContent:
			extra = b.Extra
		case *core.ToolCall:
			extra = b.Extra
		default:
			t.Errorf("content[%d] decoded as %T", i, blk)
		}
		if extra != nil {
			t.Errorf("content[%d] has unknown members %v", i, keysOf(extra))
		}
	}
}

func keysOf(m map[string]json.RawMessage) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// jsonDiff compares want and got as JSON values (both unmarshalled into
// any) and returns one line per difference, "" when they are equal.
func jsonDiff(want, got []byte) string {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		return "want is not JSON: " + err.Error()
	}
	if err := json.Unmarshal(got, &g); err != nil {
		return "got is not JSON: " + err.Error()
	}
	if reflect.DeepEqual(w, g) {
		return ""
	}
	var lines []string
	diffValues("$", w, g, &lines)
	if len(lines) == 0 {
		lines = append(lines, "values differ (no path found)")
	}
	return "  " + strings.Join(lines, "\n  ")
}

func diffValues(path string, want, got any, out *[]string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, inW := w[k]
			gv, inG := g[k]
			p := path + "." + k
			switch {
			case !inG:
				*out = append(*out, fmt.Sprintf("%s: missing, want %s", p, show(wv)))
			case !inW:
				*out = append(*out, fmt.Sprintf("%s: unexpected %s", p, show(gv)))
			default:
				diffValues(p, wv, gv, out)
			}
		}
		return
	case []any:
		g, ok := got.([]any)
		if !ok {
			break
		}
		if len(w) != len(g) {
			*out = append(*out, fmt.Sprintf("%s: want %d elements, got %d", path, len(w), len(g)))
		}
		for i := range min(len(w), len(g)) {
			diffValues(fmt.Sprintf("%s[%d]", path, i), w[i], g[i], out)
		}
		return
	}
	if !reflect.DeepEqual(want, got) {
		*out = append(*out, fmt.Sprintf("%s: want %s, got %s", path, show(want), show(got)))
	}
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// TestGoldenTranscriptBytes checks that transcript lines written by
// OpenClaw re-encode byte for byte: same member order, same number format.
func TestGoldenTranscriptBytes(t *testing.T) {
	for i, line := range goldenDocs(t, "seed000/6-transcript.jsonl") {
		m, err := core.UnmarshalMessage(line)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		got, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
		if !bytes.Equal(got, line) {
			t.Errorf("line %d re-encoded differently:\nwant %s\ngot  %s", i, line, got)
		}
	}
}

func TestGoldenTranscriptTypes(t *testing.T) {
	docs := goldenDocs(t, "seed000/6-transcript.jsonl")
	array := append([]byte("["), bytes.Join(docs, []byte(","))...)
	array = append(array, ']')
	var ms core.Messages
	if err := json.Unmarshal(array, &ms); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range ms {
		roles = append(roles, fmt.Sprintf("%s %T", m.Role(), m))
	}
	want := []string{
		"user *core.UserMessage",
		"assistant *core.AssistantMessage",
		"toolResult *core.ToolResultMessage",
		"assistant *core.AssistantMessage",
	}
	if !slices.Equal(roles, want) {
		t.Errorf("decoded %q, want %q", roles, want)
	}
	calls := ms[1].(*core.AssistantMessage).ToolCalls()
	if len(calls) != 1 || calls[0].ID != "call_1" || ms[2].(*core.ToolResultMessage).ToolCallID != calls[0].ID {
		t.Errorf("tool call and result do not pair up: %+v", calls)
	}
}

// TestGoldenToolCallAssembly checks that the seed 002 §2.2 deltas assemble
// into the arguments of the filled-in toolcall_end.
func TestGoldenToolCallAssembly(t *testing.T) {
	var args strings.Builder
	var end core.AssistantMessageEvent
	for _, doc := range goldenDocs(t, "seed002/2.2-toolcall-events.jsonl") {
		var e core.AssistantMessageEvent
		if err := json.Unmarshal(doc, &e); err != nil {
			t.Fatal(err)
		}
		if e.ContentIndex != 1 || e.Partial != nil {
			t.Errorf("%s: contentIndex %d, partial %v; want 1 and none", e.Type, e.ContentIndex, e.Partial)
		}
		switch e.Type {
		case core.AssistantEventToolCallDelta:
			args.WriteString(e.Delta)
		case core.AssistantEventToolCallEnd:
			end = e
		}
	}
	var assembled map[string]any
	if err := json.Unmarshal([]byte(args.String()), &assembled); err != nil {
		t.Fatalf("deltas %q: %v", args.String(), err)
	}
	if end.ToolCall == nil || !reflect.DeepEqual(end.ToolCall.Arguments, assembled) {
		t.Errorf("toolcall_end carries %+v, deltas assemble %v", end.ToolCall, assembled)
	}
}

func TestGoldenErrorTextIsEnvelope(t *testing.T) {
	want := core.ErrorEnvelope("exec", "command required").String()
	for _, name := range []string{"seed000/3.3-tool-result-error.json", "seed002/3.2-tool-result-error.json"} {
		m, err := core.UnmarshalMessage(goldenDocs(t, name)[0])
		if err != nil {
			t.Fatal(err)
		}
		tr := m.(*core.ToolResultMessage)
		if got := tr.Content.Text(); got != want || !tr.IsError || tr.Details != nil {
			t.Errorf("%s: text %q, isError %v, details %s; want %q, true, absent", name, got, tr.IsError, tr.Details, want)
		}
	}
}

func TestGoldenEnvelopeConstructors(t *testing.T) {
	for name, want := range map[string]core.ToolEnvelope{
		"seed002/8.1-error-envelope.json":   core.ErrorEnvelope("tool_name", "Human-readable error message"),
		"seed002/8.2-blocked-envelope.json": core.BlockedEnvelope("exec", "Tool blocked by policy: safe-bin mode"),
		"seed002/8.3-pending-envelope.json": core.PendingEnvelope("custom_tool", "Tool execution delegated to client"),
	} {
		if diff := jsonDiff(goldenDocs(t, name)[0], []byte(want.String())); diff != "" {
			t.Errorf("%s: constructor gives %s:\n%s", name, want, diff)
		}
	}
}

// TestJSONDiff checks the helper the golden tests report with.
func TestJSONDiff(t *testing.T) {
	if d := jsonDiff([]byte(`{"a":[1,{"b":2}]}`), []byte(` { "a" : [ 1.0, {"b":2} ] } `)); d != "" {
		t.Errorf("equal values reported as different:\n%s", d)
	}
	got := jsonDiff([]byte(`{"a":[1,{"b":2}],"c":true,"d":"x"}`), []byte(`{"a":[1,{"b":3}],"d":"x","e":null}`))
	want := "  $.a[1].b: want 2, got 3\n  $.c: missing, want true\n  $.e: unexpected null"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
}
