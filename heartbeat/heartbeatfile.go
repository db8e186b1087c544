package heartbeat

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// HeartbeatFile is HEARTBEAT.md's name in the workspace.
const HeartbeatFile = "HEARTBEAT.md"

// IsEffectivelyEmpty reports content with nothing to do, so the heartbeat
// can be skipped without a model call (skip reason "empty-heartbeat-file").
// Every line, trimmed, must be one of:
//
//   - blank;
//   - an ATX header: one or more '#' followed by a space or the end of the
//     line ("# Tasks", "##"; "#todo" is text, not a header);
//   - an empty list item: '-', '*' or '+', optionally followed by an empty
//     checkbox "[ ]", "[x]", "[X]" or "[]" ("- ", "* [ ]", "+ [x]");
//   - a code fence marker: three backticks and an optional info string of
//     letters, digits, '_' or '-' ("```", "```markdown").
//
// This is OpenClaw's isHeartbeatContentEffectivelyEmpty
// (src/auto-reply/heartbeat.ts). A missing file is not empty: callers that
// cannot read HEARTBEAT.md still run the heartbeat and let the model decide.
func IsEffectivelyEmpty(content string) bool {
	for line := range strings.SplitSeq(content, "\n") {
		s := trimMarkdownSpace(line)
		if s == "" || isATXHeader(s) || isEmptyListItem(s) || isFenceMarker(s) {
			continue
		}
		return false
	}
	return true
}

// isATXHeader reports "#"… followed by whitespace or the end.
func isATXHeader(s string) bool {
	rest := strings.TrimLeft(s, "#")
	if len(rest) == len(s) {
		return false
	}
	return rest == "" || startsWithMarkdownSpace(rest)
}

// isEmptyListItem reports a list marker with nothing after it but an
// optional empty checkbox.
func isEmptyListItem(s string) bool {
	if s[0] != '-' && s[0] != '*' && s[0] != '+' {
		return false
	}
	rest := trimMarkdownSpace(s[1:])
	if rest == "" {
		return true
	}
	box, ok := strings.CutPrefix(rest, "[")
	if !ok {
		return false
	}
	inside, after, ok := strings.Cut(box, "]")
	if !ok || trimMarkdownSpace(after) != "" {
		return false
	}
	switch {
	case inside == "", inside == "x", inside == "X":
		return true
	}
	r := []rune(inside)
	return len(r) == 1 && isMarkdownSpace(r[0])
}

// isFenceMarker reports "```" with an optional info string of
// [A-Za-z0-9_-].
func isFenceMarker(s string) bool {
	info, ok := strings.CutPrefix(s, "```")
	if !ok {
		return false
	}
	for _, c := range []byte(info) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// isMarkdownSpace is JavaScript's whitespace (String.prototype.trim and
// \s), which OpenClaw's checks use: Go's unicode.IsSpace plus the byte
// order mark U+FEFF, minus NEL U+0085. Counting a BOM as space keeps a
// file saved by an editor that writes one from looking non-empty.
func isMarkdownSpace(r rune) bool {
	return r == '\uFEFF' || (r != '\u0085' && unicode.IsSpace(r))
}

func trimMarkdownSpace(s string) string {
	return strings.TrimFunc(s, isMarkdownSpace)
}

func startsWithMarkdownSpace(s string) bool {
	r, size := utf8.DecodeRuneInString(s)
	return size > 0 && isMarkdownSpace(r)
}

// Task is one periodic task of a `tasks:` block in HEARTBEAT.md.
type Task struct {
	// Name identifies the task; its last-run time is kept under this name
	// (the session's heartbeatTaskState), so it is unique within the file.
	Name string
	// Interval is how long after its last run the task is due again. Zero
	// means every heartbeat.
	Interval time.Duration
	// Prompt is what the model is asked to do, one line.
	Prompt string
}

// ParseTasks finds the `tasks:` block(s) of HEARTBEAT.md and returns their
// tasks in file order; hasBlock reports whether a block exists, even an
// empty one (then the heartbeat is skipped when no task is due). The syntax
// is OpenClaw's parseHeartbeatTasks (src/auto-reply/heartbeat.ts), a small
// YAML-like subset:
//
//	tasks:
//	  - name: inbox-check
//	    interval: 30m
//	    prompt: "Check for urgent unread email"
//	  - name: calendar
//	    interval: 2h
//	    prompt: Look for meetings that need preparing
//
//	# Anything else
//
// A line that is exactly "tasks:" once trimmed opens a block. Each entry
// starts with a line that trims to "- name: <name>" and takes the indented
// (space or tab) "interval:" and "prompt:" lines after it, the last one of
// each winning; values are trimmed and lose one leading and one trailing
// quote (' or "). Intervals are read by core.ParseDuration with minutes as the
// default unit ("30m", "2h", "1d", "90" = 90 minutes). Blank lines are
// ignored. Any other line ends the block, the way a following Markdown
// heading or paragraph does, except that list items and fields before the
// block's first entry are skipped (and reported); another "tasks:" line
// opens a new block.
//
// Malformed entries are skipped and reported in errs, one error per
// problem, each starting "line N:" (1-based): a missing name, interval or
// prompt, an interval core.ParseDuration rejects, a name used twice (the later
// entry is dropped, since last-run times are kept by name), an indented
// line that is not a task field (it ends the block, and the tasks after it
// are lost, as in OpenClaw), and list items or fields before the first
// "- name:" line. OpenClaw skips these silently; an unparseable interval
// there makes a task run once and never again.
func ParseTasks(content string) (tasks []Task, hasBlock bool, errs []error) {
	var (
		inBlock bool
		cur     *taskEntry
		seen    = map[string]int{} // task name → line of its entry
	)
	finish := func() {
		if cur == nil {
			return
		}
		task, entryErrs := cur.task()
		if first, dup := seen[task.Name]; dup && len(entryErrs) == 0 {
			entryErrs = append(entryErrs, fmt.Errorf("line %d: task %q is already defined on line %d; give each task its own name, since last-run times are kept by name", cur.line, task.Name, first))
		}
		if len(entryErrs) == 0 {
			seen[task.Name] = cur.line
			tasks = append(tasks, task)
		}
		errs = append(errs, entryErrs...)
		cur = nil
	}
	for i, raw := range strings.Split(content, "\n") {
		n := i + 1
		line := trimMarkdownSpace(raw)
		if line == "tasks:" {
			finish()
			inBlock, hasBlock = true, true
			continue
		}
		if !inBlock || line == "" {
			continue
		}
		if name, ok := strings.CutPrefix(line, "- name:"); ok {
			finish()
			cur = &taskEntry{line: n, name: unquoteTaskValue(name)}
			continue
		}
		indented := raw[0] == ' ' || raw[0] == '\t'
		key, value, isField := cutTaskField(line)
		if cur != nil {
			if isField && indented {
				cur.set(key, value, n)
				continue
			}
			finish()
			inBlock = false
			if isField {
				errs = append(errs, fmt.Errorf("line %d: %q must be indented under its \"- name:\" line; the tasks block ends here", n, line))
			} else if indented {
				errs = append(errs, fmt.Errorf("line %d: %q is not a task field; a task has only \"interval:\" and \"prompt:\" lines, and the tasks block ends here", n, line))
			}
			continue
		}
		// Inside a block, before its first entry.
		switch {
		case isField:
			errs = append(errs, fmt.Errorf("line %d: %q belongs to no task; start each task with a \"- name:\" line", n, line))
		case strings.HasPrefix(line, "-"):
			errs = append(errs, fmt.Errorf("line %d: %q is not a task; start each task with a \"- name:\" line", n, line))
		default:
			if indented {
				errs = append(errs, fmt.Errorf("line %d: %q is not a task; start each task with a \"- name:\" line, and the tasks block ends here", n, line))
			}
			inBlock = false
		}
	}
	finish()
	return tasks, hasBlock, errs
}

// taskEntry is a task as written, before validation.
type taskEntry struct {
	line                     int // of "- name:"
	name                     string
	interval, prompt         string
	intervalLine, promptLine int // 0 when absent
}

func (e *taskEntry) set(key, value string, line int) {
	switch key {
	case "interval":
		e.interval, e.intervalLine = value, line
	case "prompt":
		e.prompt, e.promptLine = value, line
	}
}

// task validates the entry.
func (e *taskEntry) task() (Task, []error) {
	var errs []error
	label := fmt.Sprintf("task %q", e.name)
	if e.name == "" {
		label = "task"
		errs = append(errs, fmt.Errorf("line %d: task has no name; write it after \"- name:\", such as \"- name: inbox-check\"", e.line))
	}
	var every time.Duration
	switch {
	case e.intervalLine == 0:
		errs = append(errs, fmt.Errorf("line %d: %s has no interval; add an indented line such as \"interval: 30m\"", e.line, label))
	case e.interval == "":
		errs = append(errs, fmt.Errorf("line %d: %s has an empty interval; write one such as \"interval: 30m\"", e.intervalLine, label))
	default:
		d, err := core.ParseDuration(e.interval, time.Minute)
		if err != nil {
			errs = append(errs, fmt.Errorf("line %d: %s: %w", e.intervalLine, label, err))
		}
		every = d
	}
	switch {
	case e.promptLine == 0:
		errs = append(errs, fmt.Errorf("line %d: %s has no prompt; add an indented line such as \"prompt: Check for urgent email\"", e.line, label))
	case e.prompt == "":
		errs = append(errs, fmt.Errorf("line %d: %s has an empty prompt; say what the task should do", e.promptLine, label))
	}
	return Task{Name: e.name, Interval: every, Prompt: e.prompt}, errs
}

// cutTaskField splits an "interval: …" or "prompt: …" line.
func cutTaskField(line string) (key, value string, ok bool) {
	for _, key := range []string{"interval", "prompt"} {
		if rest, ok := strings.CutPrefix(line, key+":"); ok {
			return key, unquoteTaskValue(rest), true
		}
	}
	return "", "", false
}

// unquoteTaskValue trims v and drops one leading and one trailing quote
// character, matched or not, as OpenClaw's /^["']|["']$/g does.
func unquoteTaskValue(v string) string {
	v = trimMarkdownSpace(v)
	if v != "" && (v[0] == '"' || v[0] == '\'') {
		v = v[1:]
	}
	if v != "" && (v[len(v)-1] == '"' || v[len(v)-1] == '\'') {
		v = v[:len(v)-1]
	}
	return v
}

// DueTasks returns the tasks due at now, in order, given last-run times in
// Unix milliseconds by task name: a task never run is due, and one that
// ran is due once Interval has passed since (OpenClaw's isTaskDue). A
// last run in the future (a clock that stepped back) is not due.
func DueTasks(tasks []Task, lastRun map[string]int64, now time.Time) []Task {
	nowMs := now.UnixMilli()
	var due []Task
	for _, t := range tasks {
		last, ran := lastRun[t.Name]
		if !ran || taskIntervalElapsed(last, nowMs, t.Interval) {
			due = append(due, t)
		}
	}
	return due
}

// taskIntervalElapsed reports nowMs - lastMs >= interval without
// overflowing on odd stored values.
func taskIntervalElapsed(lastMs, nowMs int64, interval time.Duration) bool {
	if lastMs > nowMs {
		return false
	}
	if interval <= 0 {
		return true
	}
	elapsed := uint64(nowMs) - uint64(lastMs) // exact: nowMs >= lastMs
	need := (uint64(interval) + uint64(time.Millisecond) - 1) / uint64(time.Millisecond)
	return elapsed >= need
}

// The fixed sentences of the tasks prompt, OpenClaw's
// (resolveHeartbeatRunPrompt in src/infra/heartbeat-runner.ts; recognised
// by src/auto-reply/heartbeat-filter.ts).
const (
	tasksPromptIntro = "Run the following periodic tasks (only those due based on their intervals):"
	tasksPromptAck   = "After completing all due tasks, reply HEARTBEAT_OK."
)

// TasksPrompt is the heartbeat prompt for due tasks, in OpenClaw's exact
// layout:
//
//	Run the following periodic tasks (only those due based on their intervals):
//
//	- inbox-check: Check for urgent unread email
//	- calendar: Look for meetings that need preparing
//
//	After completing all due tasks, reply HEARTBEAT_OK.
//
// OpenClaw's runner then appends the rest of HEARTBEAT.md, if any is left
// once the tasks block is removed, as "\n\nAdditional context from
// HEARTBEAT.md:\n" and that text; that is the caller's part. With no due
// tasks there is nothing to run (skip reason "no-tasks-due") and
// TasksPrompt returns "".
func TasksPrompt(due []Task) string {
	if len(due) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(tasksPromptIntro)
	b.WriteString("\n\n")
	for i, t := range due {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- ")
		b.WriteString(t.Name)
		b.WriteString(": ")
		b.WriteString(t.Prompt)
	}
	b.WriteString("\n\n")
	b.WriteString(tasksPromptAck)
	return b.String()
}

// IsTasksPrompt reports a user message that is a tasks prompt: once
// trimmed it starts with TasksPrompt's first sentence and contains its
// closing one, as OpenClaw's isHeartbeatUserMessage checks. History
// filtering uses it to drop heartbeat turns that were only acknowledged.
func IsTasksPrompt(text string) bool {
	s := trimMarkdownSpace(text)
	return strings.HasPrefix(s, tasksPromptIntro) && strings.Contains(s, tasksPromptAck)
}
