package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/store"
)

// openSessions returns a real, empty sessions index in a temporary state
// directory, holding entries.
func openSessions(t *testing.T, entries ...core.SessionEntry) *store.SQLite {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatalf("store.Open: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("store Close: %v", err)
		}
	})
	for i, e := range entries {
		if e.SessionID == "" {
			e.SessionID = fmt.Sprintf("s%d", i)
		}
		if e.AgentID == "" {
			e.AgentID = e.Key.AgentID()
		}
		if err := st.PutSession(t.Context(), e); err != nil {
			t.Fatalf("PutSession(%s): %v", e.Key, err)
		}
	}
	return st
}

// ago is the UpdatedAt of a session last active d before fixedNow.
func ago(d time.Duration) int64 { return fixedNow.Add(-d).UnixMilli() }

// listTool is a sessions_list over entries whose clock reads fixedNow.
func listTool(t *testing.T, entries ...core.SessionEntry) *tools.SessionsList {
	t.Helper()
	return &tools.SessionsList{Sessions: openSessions(t, entries...), Now: func() time.Time { return fixedNow }}
}

// listAs runs tool for agentID and returns the result's only text block.
func listAs(t *testing.T, tool *tools.SessionsList, agentID string, args map[string]any) (string, tools.Result) {
	t.Helper()
	res, err := tool.Execute(t.Context(), tools.Call{ID: "c1", Name: "sessions_list", AgentID: agentID, Args: args}, nil)
	if err != nil {
		t.Fatalf("Execute(%v) as %s: %v", args, agentID, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content has %d blocks, want 1: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*core.TextContent)
	if !ok {
		t.Fatalf("content block is %T, want *core.TextContent", res.Content[0])
	}
	return tc.Text, res
}

// listedKeys returns the keys in a result's Details, in order.
func listedKeys(t *testing.T, res tools.Result) []string {
	t.Helper()
	var d struct {
		Count    int `json:"count"`
		Sessions []struct {
			Key string `json:"key"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(res.Details, &d); err != nil {
		t.Fatalf("details %s: %v", res.Details, err)
	}
	if d.Count != len(d.Sessions) {
		t.Errorf("details count %d, but %d sessions", d.Count, len(d.Sessions))
	}
	keys := make([]string, len(d.Sessions))
	for i, s := range d.Sessions {
		keys[i] = s.Key
	}
	return keys
}

// twoAgents is an index shared by agents main and ops, in no particular
// order.
var twoAgents = []core.SessionEntry{
	{Key: "agent:main:telegram:group:-100", Label: "Family", UpdatedAt: ago(time.Hour)},
	{Key: "agent:ops:main", Label: "Ops main", UpdatedAt: ago(0)},
	{Key: "agent:main:main", Label: "Ops room", UpdatedAt: ago(time.Minute), Model: "openai/gpt-5",
		LastRoute: &core.Route{Channel: "telegram", To: "42"}},
	{Key: "agent:ops:discord:channel:42", UpdatedAt: ago(2 * time.Minute)},
	{Key: "agent:main:slack:channel:c123", UpdatedAt: ago(10 * time.Minute)},
}

func TestSessionsListAgentFilterAndOrder(t *testing.T) {
	tool := listTool(t, twoAgents...)

	got, _ := listAs(t, tool, "main", nil)
	want := "3 sessions, most recently active first:\n" +
		`agent:main:main label="Ops room" channel=telegram updated=2025-02-19T21:19:00Z model=openai/gpt-5` + "\n" +
		`agent:main:slack:channel:c123 channel=slack updated=2025-02-19T21:10:00Z` + "\n" +
		`agent:main:telegram:group:-100 label="Family" channel=telegram updated=2025-02-19T20:20:00Z`
	if got != want {
		t.Errorf("main's listing:\n%s\nwant:\n%s", got, want)
	}

	// The caller's agent id is normalized like the one in the key.
	got, res := listAs(t, tool, " OPS ", map[string]any{})
	if keys := strings.Join(listedKeys(t, res), " "); keys != "agent:ops:main agent:ops:discord:channel:42" {
		t.Errorf("ops sees %s; want its own two sessions, newest first\n%s", keys, got)
	}
	if strings.Contains(got, "agent:main:") {
		t.Errorf("ops's listing shows main's sessions:\n%s", got)
	}

	if got, _ := listAs(t, tool, "support", nil); got != tools.NoSessionsText {
		t.Errorf("agent without sessions: %q, want %q", got, tools.NoSessionsText)
	}
}

func TestSessionsListEmptyIndex(t *testing.T) {
	got, res := listAs(t, listTool(t), "main", nil)
	if got != "No sessions." {
		t.Errorf("text = %q, want %q", got, "No sessions.")
	}
	if want := `{"count":0,"matched":0,"sessions":[]}`; string(res.Details) != want {
		t.Errorf("details = %s, want %s", res.Details, want)
	}
}

func TestSessionsListDetails(t *testing.T) {
	tool := listTool(t, twoAgents...)
	_, res := listAs(t, tool, "main", map[string]any{"limit": 2.0})
	want := `{"count":2,"matched":3,"sessions":[` +
		`{"key":"agent:main:main","kind":"main","label":"Ops room","channel":"telegram","updatedAt":1739999940000,"model":"openai/gpt-5"},` +
		`{"key":"agent:main:slack:channel:c123","kind":"channel","channel":"slack","updatedAt":1739999400000}]}`
	if string(res.Details) != want {
		t.Errorf("details:\n%s\nwant:\n%s", res.Details, want)
	}
}

func TestSessionsListLimit(t *testing.T) {
	var entries []core.SessionEntry
	for i := range 25 {
		entries = append(entries, core.SessionEntry{
			Key:       core.SessionKey(fmt.Sprintf("agent:main:cron:job%02d", i)),
			UpdatedAt: ago(time.Duration(i) * time.Minute),
		})
	}
	tool := listTool(t, entries...)

	tests := []struct {
		name  string
		limit any // nil means not passed
		want  int
	}{
		{"default", nil, tools.SessionsListDefaultLimit},
		{"float64 from JSON", 3.0, 3},
		{"json.Number", json.Number("2"), 2},
		{"int", 1, 1},
		{"maximum", 50.0, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{}
			if tt.limit != nil {
				args["limit"] = tt.limit
			}
			got, res := listAs(t, tool, "main", args)
			keys := listedKeys(t, res)
			if len(keys) != tt.want {
				t.Fatalf("%d sessions listed, want %d:\n%s", len(keys), tt.want, got)
			}
			// Most recent first: job00 is the newest.
			for i, k := range keys {
				if want := fmt.Sprintf("agent:main:cron:job%02d", i); k != want {
					t.Errorf("session %d is %s, want %s", i, k, want)
				}
			}
			if lines := strings.Count(got, "\n"); tt.want < 25 && lines != tt.want+1 {
				t.Errorf("%d lines after the header, want %d sessions and a note:\n%s", lines, tt.want, got)
			}
			if more := fmt.Sprintf("(%d more not shown;", 25-tt.want); tt.want < 25 && !strings.Contains(got, more) {
				t.Errorf("listing does not say %q:\n%s", more, got)
			}
		})
	}

	// null is how some models leave an optional argument out.
	if _, res := listAs(t, tool, "main", map[string]any{"limit": nil}); len(listedKeys(t, res)) != tools.SessionsListDefaultLimit {
		t.Errorf("limit null did not give the default")
	}
}

func TestSessionsListBadArgs(t *testing.T) {
	tool := listTool(t, twoAgents...)
	tests := []struct {
		name    string
		args    map[string]any
		wantErr string
	}{
		{"limit zero", map[string]any{"limit": 0.0}, "limit must be an integer from 1 to 50; got 0"},
		{"limit too big", map[string]any{"limit": 51.0}, "limit must be an integer from 1 to 50; got 51"},
		{"limit negative", map[string]any{"limit": -3}, "limit must be an integer from 1 to 50; got -3"},
		{"limit fraction", map[string]any{"limit": 2.5}, "limit must be an integer from 1 to 50; got 2.5"},
		{"limit string", map[string]any{"limit": "5"}, `limit must be an integer from 1 to 50; got the string "5"`},
		{"limit bool", map[string]any{"limit": true}, "limit must be an integer from 1 to 50; got the boolean true"},
		{"limit bad json.Number", map[string]any{"limit": json.Number("x")}, "limit must be an integer from 1 to 50; got x"},
		{"limit too big json.Number", map[string]any{"limit": json.Number("500")}, "limit must be an integer from 1 to 50; got 500"},
		{"activeMinutes zero", map[string]any{"activeMinutes": 0.0}, "activeMinutes must be an integer of at least 1; got 0"},
		{"activeMinutes string", map[string]any{"activeMinutes": "ten"}, `activeMinutes must be an integer of at least 1; got the string "ten"`},
		{"search number", map[string]any{"search": 7.0}, "search must be a string; got 7"},
		{"search array", map[string]any{"search": []any{"a"}}, "search must be a string; got an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.Execute(t.Context(), tools.Call{Name: "sessions_list", AgentID: "main", Args: tt.args}, nil)
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func TestSessionsListSearch(t *testing.T) {
	tool := listTool(t, twoAgents...)
	tests := []struct {
		search string
		want   string
	}{
		{"FAMILY", "agent:main:telegram:group:-100"},   // label, any case
		{"Slack", "agent:main:slack:channel:c123"},     // key, any case
		{"telegram", "agent:main:telegram:group:-100"}, // the key only: a route is not searched
		{"ops", "agent:main:main"},                     // label "Ops room"; ops's own sessions stay hidden
		// Blank means no filter.
		{"  ", "agent:main:main agent:main:slack:channel:c123 agent:main:telegram:group:-100"},
		{"nothing like it", ""},
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			got, res := listAs(t, tool, "main", map[string]any{"search": tt.search})
			if keys := strings.Join(listedKeys(t, res), " "); keys != tt.want {
				t.Errorf("search %q lists %q, want %q\n%s", tt.search, keys, tt.want, got)
			}
			if tt.want == "" && got != tools.NoSessionsText {
				t.Errorf("no match: text %q, want %q", got, tools.NoSessionsText)
			}
		})
	}
}

func TestSessionsListActiveMinutes(t *testing.T) {
	tool := listTool(t, twoAgents...)
	tests := []struct {
		minutes any
		want    string
	}{
		{1.0, "agent:main:main"}, // exactly one minute ago still counts
		{10, "agent:main:main agent:main:slack:channel:c123"},
		{json.Number("59"), "agent:main:main agent:main:slack:channel:c123"},
		{60.0, "agent:main:main agent:main:slack:channel:c123 agent:main:telegram:group:-100"},
		{1e300, "agent:main:main agent:main:slack:channel:c123 agent:main:telegram:group:-100"}, // no overflow
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.minutes), func(t *testing.T) {
			got, res := listAs(t, tool, "main", map[string]any{"activeMinutes": tt.minutes})
			if keys := strings.Join(listedKeys(t, res), " "); keys != tt.want {
				t.Errorf("activeMinutes %v lists %q, want %q\n%s", tt.minutes, keys, tt.want, got)
			}
		})
	}

	// The window moves with the injected clock.
	later := &tools.SessionsList{Sessions: tool.Sessions, Now: func() time.Time { return fixedNow.Add(time.Hour) }}
	if got, _ := listAs(t, later, "main", map[string]any{"activeMinutes": 30.0}); got != tools.NoSessionsText {
		t.Errorf("an hour later, activeMinutes 30: %q, want %q", got, tools.NoSessionsText)
	}
}

func TestSessionsListErrors(t *testing.T) {
	var unset tools.SessionsList
	if _, err := unset.Execute(t.Context(), tools.Call{AgentID: "main"}, nil); err == nil {
		t.Error("Execute without a sessions index succeeded")
	}

	st := openSessions(t)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	tool := &tools.SessionsList{Sessions: st}
	_, err := tool.Execute(t.Context(), tools.Call{AgentID: "main"}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "listing sessions: ") {
		t.Errorf("closed index: error %v, want one starting %q", err, "listing sessions: ")
	}
}

func TestSessionsListThroughExecutor(t *testing.T) {
	ex := newExecutor(listTool(t, twoAgents...))
	if _, spec, ok := ex.Registry.Get("sessions_list"); !ok || !strings.Contains(spec.Description, "most recently active first") {
		t.Fatalf("sessions_list not registered as expected: %+v %v", spec, ok)
	}

	// snake_case arguments are respelled to the schema's camelCase.
	// Only the owner may list conversations.
	if msg := ex.Run(t.Context(), tools.Call{ID: "c0", Name: "sessions_list", AgentID: "main"}, nil); !msg.IsError ||
		!strings.Contains(msg.Content.Text(), tools.OwnerOnlyReason) {
		t.Fatalf("a non-owner listed sessions: %s", msgJSON(t, msg))
	}
	msg := ex.Run(t.Context(), tools.Call{ID: "c1", Name: "sessions_list", AgentID: "main", SenderIsOwner: true,
		Args: map[string]any{"active_minutes": 5.0, "limit": 10.0}}, nil)
	if msg.IsError {
		t.Fatalf("call failed: %s", msgJSON(t, msg))
	}
	want := "1 session, most recently active first:\n" +
		`agent:main:main label="Ops room" channel=telegram updated=2025-02-19T21:19:00Z model=openai/gpt-5`
	if tc, ok := msg.Content[0].(*core.TextContent); !ok || tc.Text != want {
		t.Errorf("result:\n%s\nwant text:\n%s", msgJSON(t, msg), want)
	}
	if keys := listedKeys(t, tools.Result{Details: msg.Details}); len(keys) != 1 {
		t.Errorf("details list %v, want one session", keys)
	}

	msg = ex.Run(context.Background(), tools.Call{ID: "c2", Name: "sessions_list", AgentID: "main", SenderIsOwner: true,
		Args: map[string]any{"limit": 100.0}}, nil)
	wantErr := `{"status":"error","tool":"sessions_list","error":"limit must be an integer from 1 to 50; got 100"}`
	if got := msgJSON(t, msg); got != resultLine("c2", "sessions_list", text(wantErr), true) {
		t.Errorf("bad limit: %s\nwant the error envelope %s", got, wantErr)
	}
}

// scanIndex is a read-only core.SessionIndex over a slice, for the one
// test whose index is too big to fill through the real store quickly
// (5000 transactions take seconds under -race).
type scanIndex []core.SessionEntry

var _ core.SessionIndex = scanIndex(nil)

func (x scanIndex) ListSessions(_ context.Context, limit int) ([]core.SessionEntry, error) {
	if limit > 0 && limit < len(x) {
		return x[:limit], nil
	}
	return x, nil
}

func (scanIndex) GetSession(context.Context, core.SessionKey) (core.SessionEntry, bool, error) {
	return core.SessionEntry{}, false, errors.New("scanIndex is read-only")
}

func (scanIndex) PutSession(context.Context, core.SessionEntry) error {
	return errors.New("scanIndex is read-only")
}

func (scanIndex) DeleteSession(context.Context, core.SessionKey) error {
	return errors.New("scanIndex is read-only")
}

func TestSessionsListScanLimit(t *testing.T) {
	// Other agents' sessions fill the part of the index one call reads;
	// main's only session is older than all of them. Entries are most
	// recent first, as ListSessions returns them.
	var entries scanIndex
	for i := range tools.SessionsListScanLimit {
		entries = append(entries, core.SessionEntry{
			Key:       core.SessionKey(fmt.Sprintf("agent:ops:cron:%d", i)),
			UpdatedAt: ago(time.Duration(i) * time.Millisecond),
		})
	}
	entries = append(entries, core.SessionEntry{Key: "agent:main:main", UpdatedAt: ago(time.Hour)})
	tool := &tools.SessionsList{Sessions: entries}

	got, res := listAs(t, tool, "main", nil)
	want := "No sessions. (Only the 5000 most recently active sessions of this instance were searched; older ones are not listed.)"
	if got != want {
		t.Errorf("text = %q, want %q", got, want)
	}
	if want := `{"count":0,"matched":0,"incomplete":true,"sessions":[]}`; string(res.Details) != want {
		t.Errorf("details = %s, want %s", res.Details, want)
	}
	if got, _ := listAs(t, tool, "ops", map[string]any{"limit": 1.0}); !strings.HasSuffix(got, "older ones are not listed.)") {
		t.Errorf("ops's listing does not warn that it may be incomplete:\n%s", got)
	}
}
