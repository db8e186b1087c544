package heartbeat_test

import (
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/heartbeat"
)

func TestIsEffectivelyEmpty(t *testing.T) {
	empty := map[string]string{
		"nothing":                 "",
		"blank lines":             "\n\n  \n\t\n",
		"headers":                 "# Heartbeat\n\n## Tasks\n###\n#",
		"list stubs":              "- \n* \n+\n-",
		"empty checkboxes":        "- [ ]\n* [x]\n+ [X]\n-[]\n- [ ]  ",
		"checkbox with NBSP":      "- [\u00a0]",
		"fence markers":           "```\n```markdown\n```my-lang_2\n```",
		"CRLF":                    "# Title\r\n\r\n- [ ]\r\n",
		"byte order mark":         "\uFEFF# Heartbeat\n",
		"indented stubs":          "   #   \n\t- [ ]\t",
		"OpenClaw's empty file":   "# HEARTBEAT.md\n\n# Keep this file empty (or with only comments) to skip heartbeat API calls.\n\n# Add tasks below when you want the agent to check something periodically.\n",
		"fenced nothing":          "```markdown\n# Checklist\n- [ ]\n```\n",
		"unicode spaces are trim": "\u2003# Heading\u3000\n",
	}
	for name, content := range empty {
		if !heartbeat.IsEffectivelyEmpty(content) {
			t.Errorf("%s: IsEffectivelyEmpty(%q) = false, want true", name, content)
		}
	}

	notEmpty := map[string]string{
		"text":                        "Check email",
		"hashtag is not a header":     "#todo",
		"text after headers":          "# Heartbeat\n\nCheck the build.",
		"list item with text":         "- Check email",
		"checkbox with text":          "- [ ] Check email",
		"checked box with text":       "* [x] done already",
		"two checkboxes":              "- [ ] [ ]",
		"unknown box mark":            "- [y]",
		"double dash":                 "--",
		"ordered list stub":           "1. ",
		"quote":                       "> note",
		"fenced code":                 "```js\nconsole.log(1)\n```",
		"tilde fence":                 "~~~",
		"fence info with a space":     "```js title",
		"HTML comment":                "<!-- nothing here -->",
		"tasks block":                 "tasks:\n  - name: inbox\n    interval: 30m\n    prompt: Check",
		"NEL is not JavaScript space": "\u0085",
	}
	for name, content := range notEmpty {
		if heartbeat.IsEffectivelyEmpty(content) {
			t.Errorf("%s: IsEffectivelyEmpty(%q) = true, want false", name, content)
		}
	}
}

// openClawExample is the tasks example of OpenClaw's docs
// (docs/gateway/heartbeat.md).
const openClawExample = `# Heartbeat

tasks:
  - name: inbox-triage
    interval: 30m
    prompt: "Check for urgent unread emails and flag anything time sensitive."
  - name: calendar-scan
    interval: 2h
    prompt: "Check for upcoming meetings that need prep or follow-up."

# Additional instructions

- Keep alerts short.
- If nothing needs attention after all due tasks, reply HEARTBEAT_OK.
`

func TestParseTasks(t *testing.T) {
	rows := []struct {
		name     string
		content  string
		want     []heartbeat.Task
		hasBlock bool
		errs     []string // exact messages, in order
	}{
		{
			name:    "OpenClaw's example",
			content: openClawExample,
			want: []heartbeat.Task{
				{Name: "inbox-triage", Interval: 30 * time.Minute, Prompt: "Check for urgent unread emails and flag anything time sensitive."},
				{Name: "calendar-scan", Interval: 2 * time.Hour, Prompt: "Check for upcoming meetings that need prep or follow-up."},
			},
			hasBlock: true,
		},
		{
			name:     "no block",
			content:  "# Checklist\n- name: not-a-task\n  interval: 5m\n  prompt: nope\n",
			hasBlock: false,
		},
		{
			name:     "empty block",
			content:  "tasks:\n\n# Notes\n",
			hasBlock: true,
		},
		{
			name:     "entries at column 0, fields tab-indented, CRLF, no final newline",
			content:  "tasks:\r\n- name: a\r\n\tinterval: 1d\r\n\tprompt: Do a\r\n- name: b\r\n\tinterval: 90\r\n\tprompt: Do b",
			want:     []heartbeat.Task{{Name: "a", Interval: 24 * time.Hour, Prompt: "Do a"}, {Name: "b", Interval: 90 * time.Minute, Prompt: "Do b"}},
			hasBlock: true,
		},
		{
			name: "quotes and fields in any order, the last one winning",
			content: "tasks:\n" +
				"  - name: 'single'\n    prompt: first\n    interval: 5m\n    prompt: '  kept spaces  '\n" +
				"  - name: \"mixed'\n    interval: \"0\"\n    prompt: Say \"hi\"\n",
			want: []heartbeat.Task{
				{Name: "single", Interval: 5 * time.Minute, Prompt: "  kept spaces  "},
				// OpenClaw drops one trailing quote even when it belongs to the text.
				{Name: "mixed", Interval: 0, Prompt: `Say "hi`},
			},
			hasBlock: true,
		},
		{
			name: "two blocks",
			content: "tasks:\n  - name: a\n    interval: 1h\n    prompt: A\n\nSome prose.\n\n" +
				"tasks:\n  - name: b\n    interval: 2h\n    prompt: B\n",
			want:     []heartbeat.Task{{Name: "a", Interval: time.Hour, Prompt: "A"}, {Name: "b", Interval: 2 * time.Hour, Prompt: "B"}},
			hasBlock: true,
		},
		{
			name:     "a tasks line inside an entry starts a new block",
			content:  "tasks:\n  - name: a\n    interval: 1h\n    prompt: A\ntasks:\n  - name: b\n    interval: 1h\n    prompt: B\n",
			want:     []heartbeat.Task{{Name: "a", Interval: time.Hour, Prompt: "A"}, {Name: "b", Interval: time.Hour, Prompt: "B"}},
			hasBlock: true,
		},
		{
			name: "missing fields",
			content: "tasks:\n" + // 1
				"  - name: no-prompt\n" + // 2
				"    interval: 5m\n" + // 3
				"  - name: no-interval\n" + // 4
				"    prompt: P\n" + // 5
				"  - name:\n" + // 6
				"    interval:\n" + // 7
				"    prompt: \"\"\n" + // 8
				"  - name: ok\n" + // 9
				"    interval: 5m\n" + // 10
				"    prompt: fine\n", // 11
			want:     []heartbeat.Task{{Name: "ok", Interval: 5 * time.Minute, Prompt: "fine"}},
			hasBlock: true,
			errs: []string{
				`line 2: task "no-prompt" has no prompt; add an indented line such as "prompt: Check for urgent email"`,
				`line 4: task "no-interval" has no interval; add an indented line such as "interval: 30m"`,
				`line 6: task has no name; write it after "- name:", such as "- name: inbox-check"`,
				`line 7: task has an empty interval; write one such as "interval: 30m"`,
				`line 8: task has an empty prompt; say what the task should do`,
			},
		},
		{
			name:     "bad interval",
			content:  "tasks:\n  - name: soon\n    interval: soon\n    prompt: P\n  - name: minus\n    interval: -5m\n    prompt: P\n",
			hasBlock: true,
			errs: []string{
				`line 3: task "soon": invalid duration "soon": expected a number at "soon"; use values like 30m, 2h, 1d or 1h30m`,
				`line 6: task "minus": invalid duration "-5m": must not be negative`,
			},
		},
		{
			name:     "duplicate name",
			content:  "tasks:\n  - name: a\n    interval: 1h\n    prompt: first\n  - name: a\n    interval: 2h\n    prompt: second\n",
			want:     []heartbeat.Task{{Name: "a", Interval: time.Hour, Prompt: "first"}},
			hasBlock: true,
			errs:     []string{`line 5: task "a" is already defined on line 2; give each task its own name, since last-run times are kept by name`},
		},
		{
			name: "an unknown indented field ends the block",
			content: "tasks:\n  - name: a\n    interval: 1h\n    prompt: A\n    description: extra\n" +
				"  - name: lost\n    interval: 1h\n    prompt: L\n",
			want:     []heartbeat.Task{{Name: "a", Interval: time.Hour, Prompt: "A"}},
			hasBlock: true,
			errs:     []string{`line 5: "description: extra" is not a task field; a task has only "interval:" and "prompt:" lines, and the tasks block ends here`},
		},
		{
			name:     "an unindented field ends the block",
			content:  "tasks:\n- name: a\ninterval: 1h\nprompt: A\n- name: lost\n  interval: 1h\n  prompt: L\n",
			hasBlock: true,
			errs: []string{
				`line 2: task "a" has no interval; add an indented line such as "interval: 30m"`,
				`line 2: task "a" has no prompt; add an indented line such as "prompt: Check for urgent email"`,
				`line 3: "interval: 1h" must be indented under its "- name:" line; the tasks block ends here`,
			},
		},
		{
			name:     "a heading ends the block quietly",
			content:  "tasks:\n  - name: a\n    interval: 1h\n    prompt: A\n## Notes\n  - name: outside\n    interval: 1h\n    prompt: O\n",
			want:     []heartbeat.Task{{Name: "a", Interval: time.Hour, Prompt: "A"}},
			hasBlock: true,
		},
		{
			name:     "a checklist under tasks: is reported and skipped",
			content:  "tasks:\n- Check email\n  interval: 5m\n- name: a\n  interval: 10m\n  prompt: A\n",
			want:     []heartbeat.Task{{Name: "a", Interval: 10 * time.Minute, Prompt: "A"}},
			hasBlock: true,
			errs: []string{
				`line 2: "- Check email" is not a task; start each task with a "- name:" line`,
				`line 3: "interval: 5m" belongs to no task; start each task with a "- name:" line`,
			},
		},
		{
			name:     "indented prose right after tasks: ends the block",
			content:  "tasks:\n  foo: bar\n  - name: a\n    interval: 1h\n    prompt: A\n",
			hasBlock: true,
			errs:     []string{`line 2: "foo: bar" is not a task; start each task with a "- name:" line, and the tasks block ends here`},
		},
		{
			name:     "tasks: must be alone on its line",
			content:  "tasks: inline\n  - name: a\n    interval: 1h\n    prompt: A\n# tasks:\n",
			hasBlock: false,
		},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			got, hasBlock, errs := heartbeat.ParseTasks(r.content)
			if !reflect.DeepEqual(got, r.want) {
				t.Errorf("tasks =\n%#v\nwant\n%#v", got, r.want)
			}
			if hasBlock != r.hasBlock {
				t.Errorf("hasBlock = %v, want %v", hasBlock, r.hasBlock)
			}
			var msgs []string
			for _, e := range errs {
				msgs = append(msgs, e.Error())
			}
			if !reflect.DeepEqual(msgs, r.errs) {
				t.Errorf("errs =\n%s\nwant\n%s", strings.Join(msgs, "\n"), strings.Join(r.errs, "\n"))
			}
		})
	}
}

// errLine matches the "line N: " every ParseTasks error starts with.
var errLine = regexp.MustCompile(`^line ([1-9][0-9]*): `)

func TestParseTasksErrorsNameLines(t *testing.T) {
	content := "tasks:\n- x\n  - name:\n    interval: never\n  - name: b\n    bogus: 1\n"
	_, _, errs := heartbeat.ParseTasks(content)
	if len(errs) == 0 {
		t.Fatal("no errors for a broken block")
	}
	for _, e := range errs {
		if !errLine.MatchString(e.Error()) {
			t.Errorf("error %q does not start with a line number", e)
		}
	}
}

func TestDueTasks(t *testing.T) {
	now := time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)
	ms := func(d time.Duration) int64 { return now.Add(-d).UnixMilli() }
	tasks := []heartbeat.Task{
		{Name: "never-ran", Interval: time.Hour, Prompt: "a"},
		{Name: "exactly-due", Interval: 30 * time.Minute, Prompt: "b"},
		{Name: "one-ms-early", Interval: 30 * time.Minute, Prompt: "c"},
		{Name: "long-ago", Interval: 24 * time.Hour, Prompt: "d"},
		{Name: "future-run", Interval: 0, Prompt: "e"},
		{Name: "every-heartbeat", Interval: 0, Prompt: "f"},
		{Name: "odd-stored-value", Interval: time.Hour, Prompt: "g"},
		{Name: "sub-ms-not-yet", Interval: 1500 * time.Microsecond, Prompt: "h"},
		{Name: "sub-ms-due", Interval: 1500 * time.Microsecond, Prompt: "i"},
	}
	last := map[string]int64{
		"exactly-due":      ms(30 * time.Minute),
		"one-ms-early":     ms(30*time.Minute - time.Millisecond),
		"long-ago":         ms(72 * time.Hour),
		"future-run":       ms(-time.Minute),
		"every-heartbeat":  ms(0),
		"odd-stored-value": math.MinInt64,
		"sub-ms-not-yet":   ms(time.Millisecond),
		"sub-ms-due":       ms(2 * time.Millisecond),
		"not-a-task":       0,
	}
	var names []string
	for _, d := range heartbeat.DueTasks(tasks, last, now) {
		names = append(names, d.Name)
	}
	want := []string{"never-ran", "exactly-due", "long-ago", "every-heartbeat", "odd-stored-value", "sub-ms-due"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("due = %q, want %q", names, want)
	}

	if got := heartbeat.DueTasks(tasks[:2], nil, now); len(got) != 2 {
		t.Errorf("with no last-run state every task is due, got %d of 2", len(got))
	}
	if got := heartbeat.DueTasks(nil, last, now); got != nil {
		t.Errorf("DueTasks(nil) = %v, want nil", got)
	}
}

func TestTasksPrompt(t *testing.T) {
	due := []heartbeat.Task{
		{Name: "inbox-triage", Interval: 30 * time.Minute, Prompt: "Check for urgent unread emails and flag anything time sensitive."},
		{Name: "calendar-scan", Interval: 2 * time.Hour, Prompt: "Check for upcoming meetings that need prep or follow-up."},
	}
	want := "Run the following periodic tasks (only those due based on their intervals):\n" +
		"\n" +
		"- inbox-triage: Check for urgent unread emails and flag anything time sensitive.\n" +
		"- calendar-scan: Check for upcoming meetings that need prep or follow-up.\n" +
		"\n" +
		"After completing all due tasks, reply HEARTBEAT_OK."
	if got := heartbeat.TasksPrompt(due); got != want {
		t.Errorf("TasksPrompt =\n%s\nwant\n%s", got, want)
	}
	if got := heartbeat.TasksPrompt(nil); got != "" {
		t.Errorf("TasksPrompt(nil) = %q, want empty", got)
	}
	one := heartbeat.TasksPrompt(due[:1])
	if want := "Run the following periodic tasks (only those due based on their intervals):\n\n- inbox-triage: Check for urgent unread emails and flag anything time sensitive.\n\nAfter completing all due tasks, reply HEARTBEAT_OK."; one != want {
		t.Errorf("TasksPrompt(one) =\n%s\nwant\n%s", one, want)
	}
}

func TestIsTasksPrompt(t *testing.T) {
	prompt := heartbeat.TasksPrompt([]heartbeat.Task{{Name: "a", Prompt: "Do a"}})
	yes := []string{
		prompt,
		"  \n" + prompt + "\n",
		prompt + "\n\nAdditional context from HEARTBEAT.md:\n- Keep alerts short.",
		"Run the following periodic tasks (only those due based on their intervals):\nanything\nAfter completing all due tasks, reply HEARTBEAT_OK. trailing",
	}
	for _, s := range yes {
		if !heartbeat.IsTasksPrompt(s) {
			t.Errorf("IsTasksPrompt(%q) = false, want true", s)
		}
	}
	no := []string{
		"",
		"Read HEARTBEAT.md if it exists (workspace context). Follow it strictly. Do not infer or repeat old tasks from prior chats. If nothing needs attention, reply HEARTBEAT_OK.",
		"Run the following periodic tasks (only those due based on their intervals):\n\n- a: Do a",
		"After completing all due tasks, reply HEARTBEAT_OK.",
		// The first sentence must be complete.
		"Run the following periodic tasks:\n- email-check: Check for urgent unread emails\nAfter completing all due tasks, reply HEARTBEAT_OK.",
		"Please: " + prompt,
	}
	for _, s := range no {
		if heartbeat.IsTasksPrompt(s) {
			t.Errorf("IsTasksPrompt(%q) = true, want false", s)
		}
	}
}

// TestParsedTasksRoundTrip runs the whole path: parse, pick the due ones,
// build the prompt, recognise it.
func TestParsedTasksRoundTrip(t *testing.T) {
	tasks, hasBlock, errs := heartbeat.ParseTasks(openClawExample)
	if !hasBlock || len(errs) != 0 || len(tasks) != 2 {
		t.Fatalf("ParseTasks = %v, %v, %v", tasks, hasBlock, errs)
	}
	now := time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)
	last := map[string]int64{"inbox-triage": now.Add(-10 * time.Minute).UnixMilli(), "calendar-scan": now.Add(-3 * time.Hour).UnixMilli()}
	due := heartbeat.DueTasks(tasks, last, now)
	if len(due) != 1 || due[0].Name != "calendar-scan" {
		t.Fatalf("due = %v, want calendar-scan only", due)
	}
	p := heartbeat.TasksPrompt(due)
	if !strings.Contains(p, "- calendar-scan: Check for upcoming meetings") || strings.Contains(p, "inbox-triage") {
		t.Errorf("prompt lists the wrong tasks:\n%s", p)
	}
	if !heartbeat.IsTasksPrompt(p) {
		t.Error("IsTasksPrompt does not recognise TasksPrompt's output")
	}
}
