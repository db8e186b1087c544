package queue

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestApplyDrop(t *testing.T) {
	cases := []struct {
		n, capacity int
		policy      DropPolicy
		dropOldest  int
		rejectNew   bool
	}{
		// Below the cap every policy admits.
		{0, 3, DropSummarize, 0, false},
		{2, 3, DropOld, 0, false},
		{2, 3, DropNew, 0, false},
		// At the cap: one makes room, or new is refused.
		{3, 3, DropSummarize, 1, false},
		{3, 3, DropOld, 1, false},
		{3, 3, DropNew, 0, true},
		// Above the cap (the cap was lowered): down to cap-1, then the new one.
		{7, 3, DropSummarize, 5, false},
		{7, 3, DropOld, 5, false},
		{7, 3, DropNew, 0, true},
		// Cap 1 keeps only the newest.
		{1, 1, DropOld, 1, false},
		// Aliases and the default.
		{3, 3, "newest", 0, true},
		{3, 3, "oldest", 1, false},
		{3, 3, "", 1, false},
		// No cap.
		{100, 0, DropNew, 0, false},
		{100, -1, DropOld, 0, false},
	}
	for _, tc := range cases {
		drop, reject := ApplyDrop(tc.n, tc.capacity, tc.policy)
		if drop != tc.dropOldest || reject != tc.rejectNew {
			t.Errorf("ApplyDrop(%d, %d, %q) = %d, %v; want %d, %v", tc.n, tc.capacity, tc.policy, drop, reject, tc.dropOldest, tc.rejectNew)
		}
	}
}

func TestOverflowAdd(t *testing.T) {
	var o Overflow
	for i := 1; i <= 5; i++ {
		o.Add(fmt.Sprintf("message %d\nsecond line", i), 3)
	}
	want := Overflow{Dropped: 5, Lines: []string{"message 3 second line", "message 4 second line", "message 5 second line"}}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("after 5 adds with cap 3: %+v, want %+v", o, want)
	}
	o.Add("   ", 3) // an empty text is counted but adds no line
	if o.Dropped != 6 || len(o.Lines) != 3 {
		t.Errorf("empty text: %+v", o)
	}
	o.Add(strings.Repeat("z", 300), 3)
	if last := o.Lines[len(o.Lines)-1]; last != strings.Repeat("z", 159)+"…" {
		t.Errorf("Add did not elide: %q", last)
	}
	var none Overflow
	none.Add("x", 0)
	none.Add("y", -2)
	if none.Dropped != 2 || len(none.Lines) != 0 {
		t.Errorf("cap 0 keeps no lines: %+v", none)
	}
}

// TestDropSummarizeFlow is OpenClaw's applyQueueDropPolicy run by hand: a
// queue with cap 2 receiving five messages keeps the newest two and a
// summary of the three it dropped.
func TestDropSummarizeFlow(t *testing.T) {
	var queue []string
	var o Overflow
	for i := 1; i <= 5; i++ {
		msg := fmt.Sprintf("m%d", i)
		drop, reject := ApplyDrop(len(queue), 2, DropSummarize)
		if reject {
			t.Fatalf("summarize rejected %s", msg)
		}
		for _, old := range queue[:drop] {
			o.Add(old, 2)
		}
		queue = append(queue[drop:], msg)
	}
	if !reflect.DeepEqual(queue, []string{"m4", "m5"}) {
		t.Errorf("queue = %v", queue)
	}
	if want := "[Queued messages while agent was busy]\n\n" +
		"[Queue overflow] Dropped 3 messages due to cap.\nSummary:\n- m2\n- m3\n\n" +
		"---\nQueued #1\nm4\n\n---\nQueued #2\nm5"; CollectPrompt(queue, o) != want {
		t.Errorf("collect prompt:\n%s", CollectPrompt(queue, o))
	}
}
