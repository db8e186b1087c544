package heartbeat_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/heartbeat"
)

var fuzzNow = time.Date(2026, 4, 13, 12, 0, 0, 0, time.UTC)

// FuzzParseTasks checks that any HEARTBEAT.md parses without panicking and
// that what comes out is usable: every task is complete with a unique
// name, every error names a line of the input, and the prompt built from
// the tasks is recognised as a tasks prompt. The seeds run as part of
// go test.
func FuzzParseTasks(f *testing.F) {
	for _, seed := range []string{
		"",
		openClawExample,
		"tasks:\n",
		"tasks:\n- name: a\n\tinterval: 1d\n\tprompt: Do a",
		"tasks:\r\n  - name: 'a'\r\n    interval: \"90\"\r\n    prompt: x\r\n",
		"tasks:\n  - name: a\n    interval: 1h\n    prompt: A\n    description: extra\n  - name: b\n    interval: 1h\n    prompt: B\n",
		"tasks:\n- name: a\ninterval: 1h\nprompt: A\n",
		"tasks:\n- Check email\n  interval: 5m\n  prompt: stray\n",
		"tasks:\n  - name: a\n    interval: 1h\n    prompt: A\n  - name: a\n    interval: 2h\n    prompt: B\n",
		"tasks:\n  - name:\n    interval: -5m\n    prompt: \"\n",
		"tasks:\n  - name: x\n    interval: 99999999999999999999d\n    prompt: p\n",
		"tasks:\ntasks:\n  - name: x\n    interval: 0\n    prompt: '\n",
		"\uFEFFtasks:\n  - name: \u00a0\n    interval: 1µs\n    prompt: \u2028\n",
		"# Heading\n- [ ]\n```\n",
		"- name: outside\n  interval: 1h\n  prompt: nope\n",
		"tasks:\n \n\t\n  - name: \"\"\n",
		"tasks:\n  - name: a\n    interval: 1h30\n    prompt: p\n",
		"tasks:\n  - name: \xff\xfe\n    interval: 1\xffh\n    prompt: \xc0\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		tasks, hasBlock, errs := heartbeat.ParseTasks(content)
		lines := strings.Count(content, "\n") + 1

		if !hasBlock && (len(tasks) > 0 || len(errs) > 0) {
			t.Fatalf("no block but %d tasks and %d errors", len(tasks), len(errs))
		}
		if hasBlock && heartbeat.IsEffectivelyEmpty(content) {
			t.Fatal("a file with a tasks block is effectively empty")
		}
		names := map[string]bool{}
		for _, task := range tasks {
			if task.Name == "" || task.Prompt == "" || task.Interval < 0 {
				t.Fatalf("incomplete task %#v", task)
			}
			if names[task.Name] {
				t.Fatalf("task name %q returned twice", task.Name)
			}
			names[task.Name] = true
		}
		for _, err := range errs {
			m := errLine.FindStringSubmatch(err.Error())
			if m == nil {
				t.Fatalf("error %q names no line", err)
			}
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > lines {
				t.Fatalf("error %q names line %d of %d", err, n, lines)
			}
		}

		again, hasBlockAgain, errsAgain := heartbeat.ParseTasks(content)
		if len(again) != len(tasks) || hasBlockAgain != hasBlock || len(errsAgain) != len(errs) {
			t.Fatal("ParseTasks is not deterministic")
		}

		due := heartbeat.DueTasks(tasks, nil, fuzzNow)
		if len(due) != len(tasks) {
			t.Fatalf("with no last runs %d of %d tasks are due", len(due), len(tasks))
		}
		if p := heartbeat.TasksPrompt(due); len(due) > 0 && !heartbeat.IsTasksPrompt(p) {
			t.Fatalf("IsTasksPrompt rejects TasksPrompt's output:\n%s", p)
		}
	})
}
