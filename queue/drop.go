package queue

// ApplyDrop applies a drop policy before a message joins a queue that holds
// n messages and may hold capacity (openclaw-facts §3.2, OpenClaw's
// applyQueueDropPolicy). Below capacity, or with capacity ≤ 0 (no limit),
// the message simply joins. At or above capacity, DropNew rejects the
// incoming message (rejectNew), and DropOld and DropSummarize drop the
// dropOldest = n - capacity + 1 oldest messages to make room; under
// DropSummarize the caller records each of them with Overflow.Add. An
// unknown or empty policy counts as the default, summarize.
func ApplyDrop(n, capacity int, policy DropPolicy) (dropOldest int, rejectNew bool) {
	if capacity <= 0 || n < capacity {
		return 0, false
	}
	if policy.canonical() == DropNew {
		return 0, true
	}
	return n - capacity + 1, false
}

// Add records one message dropped under the summarize policy: it counts
// it, appends the summary line of its text (SummaryLine; an empty text adds
// no line), and keeps only the newest capacity lines, so a long overflow
// cannot grow the prompt without bound. capacity is the queue's cap;
// values below 0 count as 0.
func (o *Overflow) Add(text string, capacity int) {
	o.Dropped++
	if line := SummaryLine(text); line != "" {
		o.Lines = append(o.Lines, line)
	}
	capacity = max(capacity, 0)
	if extra := len(o.Lines) - capacity; extra > 0 {
		o.Lines = append(o.Lines[:0], o.Lines[extra:]...)
	}
}
