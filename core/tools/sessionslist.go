package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/switchboardhq/switchboard/core"
)

// Limits of the sessions_list tool.
const (
	// SessionsListDefaultLimit is how many sessions sessions_list shows when
	// the model passes no limit.
	SessionsListDefaultLimit = 20
	// SessionsListMaxLimit is the largest limit sessions_list accepts.
	SessionsListMaxLimit = 50
	// SessionsListScanLimit is how many entries of the sessions index, of
	// all agents, sessions_list reads per call. The index cannot filter by
	// agent, so this bounds the memory one call takes; an agent whose
	// sessions are all older than the most recent SessionsListScanLimit
	// sessions of the instance sees none of them, and the listing says so.
	SessionsListScanLimit = 5000
)

// NoSessionsText is the text of a sessions_list result with no sessions.
const NoSessionsText = "No sessions."

// sessionsListSchema is the sessions_list parameter schema. The bounds are
// checked again in Execute, since nothing else enforces a schema.
var sessionsListSchema = fmt.Sprintf(`{"type":"object","properties":{`+
	`"limit":{"type":"integer","minimum":1,"maximum":%[1]d,"default":%[2]d,`+
	`"description":"How many sessions to list at most, 1 to %[1]d. Default %[2]d."},`+
	`"activeMinutes":{"type":"integer","minimum":1,`+
	`"description":"Only sessions with activity in the last this many minutes."},`+
	`"search":{"type":"string",`+
	`"description":"Only sessions whose key or label contains this text, ignoring case."}}}`,
	SessionsListMaxLimit, SessionsListDefaultLimit)

// msPerMinute converts activeMinutes to the Unix ms of SessionEntry.
const msPerMinute = int64(time.Minute / time.Millisecond)

// Compile-time check that SessionsList is a tool.
var _ Tool = (*SessionsList)(nil)

// SessionsList is the sessions_list tool: it lists the sessions of the
// calling agent (Call.AgentID), most recently active first, from a sessions
// index. It only reads, so it is safe for concurrent use when Sessions is.
type SessionsList struct {
	// Sessions is the index the sessions are read from; it is required.
	Sessions core.SessionIndex
	// Now is the clock the activeMinutes filter counts back from; nil
	// means time.Now.
	Now func() time.Time
}

// sessionsListArgs are the parsed arguments of one sessions_list call.
type sessionsListArgs struct {
	limit int
	// since is the oldest UpdatedAt, in Unix ms, that passes the
	// activeMinutes filter; math.MinInt64 when there is none.
	since int64
	// search is lowercased; empty means no filter.
	search string
}

// sessionsListItem is one session in the Details of a sessions_list result.
type sessionsListItem struct {
	Key     core.SessionKey  `json:"key"`
	Kind    core.SessionKind `json:"kind,omitempty"`
	Label   string           `json:"label,omitempty"`
	Channel string           `json:"channel,omitempty"`
	// UpdatedAt is the last activity in Unix ms, as in core.SessionEntry.
	UpdatedAt int64  `json:"updatedAt"`
	Model     string `json:"model,omitempty"`
}

// sessionsListDetails is the Details of a sessions_list result.
type sessionsListDetails struct {
	// Count is the number of sessions listed.
	Count int `json:"count"`
	// Matched is the number of the agent's sessions that passed the
	// filters, before the limit.
	Matched int `json:"matched"`
	// Incomplete reports that the index returned all the entries one call
	// reads (SessionsListScanLimit), so older sessions may be missing.
	Incomplete bool               `json:"incomplete,omitempty"`
	Sessions   []sessionsListItem `json:"sessions"`
}

// Spec describes sessions_list to the model.
func (t *SessionsList) Spec() Spec {
	return Spec{
		Name: "sessions_list",
		Description: "List the conversations (sessions) this agent has, most recently active first: " +
			"key, label, channel, last activity. Use it to find a session before reading its history. " +
			"Narrow the list with search (text in the key or label) or activeMinutes; at most " +
			strconv.Itoa(SessionsListMaxLimit) + " per call.",
		Parameters: json.RawMessage(sessionsListSchema),
		// Other people's conversations are the owner's to read.
		Flags: Flags{OwnerOnly: true},
	}
}

// Execute lists the calling agent's sessions that pass the filters in
// call.Args. An invalid argument is an error that names it and the values
// allowed.
func (t *SessionsList) Execute(ctx context.Context, call Call, _ func(Result)) (Result, error) {
	if t.Sessions == nil {
		return Result{}, errors.New("no sessions index is configured")
	}
	args, err := t.parseArgs(call.Args)
	if err != nil {
		return Result{}, err
	}
	entries, err := t.Sessions.ListSessions(ctx, SessionsListScanLimit)
	if err != nil {
		return Result{}, fmt.Errorf("listing sessions: %w", err)
	}
	agentID := core.NormalizeAgentID(call.AgentID)
	var matched []core.SessionEntry
	for _, e := range entries {
		if e.Key.AgentID() == agentID && args.keep(e) {
			matched = append(matched, e)
		}
	}
	// The index promises this order; sorting again keeps the promise of
	// the tool's description whatever index is plugged in.
	slices.SortStableFunc(matched, func(a, b core.SessionEntry) int {
		return cmp.Or(cmp.Compare(b.UpdatedAt, a.UpdatedAt), strings.Compare(string(a.Key), string(b.Key)))
	})
	shown := matched[:min(len(matched), args.limit)]
	details := sessionsListDetails{
		Count:      len(shown),
		Matched:    len(matched),
		Incomplete: len(entries) >= SessionsListScanLimit,
		Sessions:   make([]sessionsListItem, len(shown)),
	}
	for i, e := range shown {
		details.Sessions[i] = listItem(e)
	}
	raw, err := json.Marshal(details)
	if err != nil {
		return Result{}, fmt.Errorf("encoding details: %w", err)
	}
	res := TextResult(listingText(details))
	res.Details = raw
	return res, nil
}

// keep reports whether e passes the activeMinutes and search filters.
func (a sessionsListArgs) keep(e core.SessionEntry) bool {
	if e.UpdatedAt < a.since {
		return false
	}
	if a.search == "" {
		return true
	}
	return strings.Contains(strings.ToLower(string(e.Key)), a.search) ||
		strings.Contains(strings.ToLower(e.Label), a.search)
}

func (t *SessionsList) parseArgs(raw map[string]any) (sessionsListArgs, error) {
	args := sessionsListArgs{limit: SessionsListDefaultLimit, since: math.MinInt64}
	if v, ok := present(raw, "limit"); ok {
		n, isInt := wholeNumber(v)
		if !isInt || n < 1 || n > SessionsListMaxLimit {
			return args, fmt.Errorf("limit must be an integer from 1 to %d; got %s", SessionsListMaxLimit, describeArg(v))
		}
		args.limit = int(n)
	}
	if v, ok := present(raw, "activeMinutes"); ok {
		n, isInt := wholeNumber(v)
		if !isInt || n < 1 {
			return args, fmt.Errorf("activeMinutes must be an integer of at least 1; got %s", describeArg(v))
		}
		// Beyond this every timestamp passes, and the product would
		// overflow.
		if n <= float64(math.MaxInt64/msPerMinute) {
			args.since = t.now().UnixMilli() - int64(n)*msPerMinute
		}
	}
	if v, ok := present(raw, "search"); ok {
		s, isString := v.(string)
		if !isString {
			return args, fmt.Errorf("search must be a string; got %s", describeArg(v))
		}
		args.search = strings.ToLower(strings.TrimSpace(s))
	}
	return args, nil
}

func (t *SessionsList) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// present returns args[k] unless it is absent or null: models send null
// for an optional argument they mean to leave out.
func present(args map[string]any, k string) (any, bool) {
	v, ok := args[k]
	return v, ok && v != nil
}

// wholeNumber returns v as a float64 if it is a number without a fraction.
// Arguments decoded from JSON are float64 or json.Number; Go callers may
// pass ints.
func wholeNumber(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	case int:
		f = float64(n)
	case int32:
		f = float64(n)
	case int64:
		f = float64(n)
	case uint:
		f = float64(n)
	case uint32:
		f = float64(n)
	case uint64:
		f = float64(n)
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return 0, false
	}
	return f, true
}

// describeArg shows a bad argument value in an error, with its JSON type
// when that is what is wrong.
func describeArg(v any) string {
	switch v.(type) {
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("the boolean %v", v)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprint(v)
}

func listItem(e core.SessionEntry) sessionsListItem {
	it := sessionsListItem{Key: e.Key, Label: e.Label, UpdatedAt: e.UpdatedAt, Model: e.Model}
	if p, err := core.ParseSessionKey(string(e.Key)); err == nil {
		it.Kind, it.Channel = p.Kind, p.Channel
	}
	// Where the session was last reached beats what the key says: a main
	// session's key names no channel at all.
	if e.LastRoute != nil && e.LastRoute.Channel != "" {
		it.Channel = string(e.LastRoute.Channel)
	}
	return it
}

// listingText is the model's view of a listing, one session per line:
//
//	agent:main:main label="Ops" channel=telegram updated=2025-02-19T21:20:00Z model=openai/gpt-5
func listingText(d sessionsListDetails) string {
	if d.Count == 0 {
		if d.Incomplete {
			return NoSessionsText + " " + incompleteNote
		}
		return NoSessionsText
	}
	var b strings.Builder
	if d.Count == 1 {
		b.WriteString("1 session")
	} else {
		fmt.Fprintf(&b, "%d sessions", d.Count)
	}
	if d.Matched > d.Count {
		fmt.Fprintf(&b, " of %d", d.Matched)
	}
	b.WriteString(", most recently active first:")
	for _, s := range d.Sessions {
		b.WriteByte('\n')
		b.WriteString(token(string(s.Key)))
		if s.Label != "" {
			b.WriteString(" label=" + strconv.Quote(s.Label))
		}
		if s.Channel != "" {
			b.WriteString(" channel=" + token(s.Channel))
		}
		if s.UpdatedAt != 0 {
			b.WriteString(" updated=" + time.UnixMilli(s.UpdatedAt).UTC().Format(time.RFC3339))
		}
		if s.Model != "" {
			b.WriteString(" model=" + token(s.Model))
		}
	}
	if d.Matched > d.Count {
		fmt.Fprintf(&b, "\n(%d more not shown; narrow with search or activeMinutes, or raise limit up to %d.)",
			d.Matched-d.Count, SessionsListMaxLimit)
	}
	if d.Incomplete {
		b.WriteString("\n" + incompleteNote)
	}
	return b.String()
}

var incompleteNote = fmt.Sprintf("(Only the %d most recently active sessions of this instance were searched; older ones are not listed.)", SessionsListScanLimit)

// token returns s as is when it reads as one word, and quoted otherwise,
// so a stray space or line break cannot blur the one-line-per-session
// layout.
func token(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == '"'
	}) {
		return s
	}
	return strconv.Quote(s)
}
