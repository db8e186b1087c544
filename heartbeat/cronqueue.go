package heartbeat

import "container/heap"

// dueEntry is one job's next run time as it was when queued. Entries are
// not removed when a job changes: a stale entry (the job gone, disabled,
// or its next run time moved) is skipped when it reaches the top.
type dueEntry struct {
	at int64
	id string
}

// dueQueue is a min-heap of dueEntry by time, so a scheduler pass costs
// O(k log n) for k due jobs instead of a scan of every job.
type dueQueue []dueEntry

func (q dueQueue) Len() int           { return len(q) }
func (q dueQueue) Less(i, j int) bool { return q[i].at < q[j].at }
func (q dueQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *dueQueue) Push(x any)        { *q = append(*q, x.(dueEntry)) }
func (q *dueQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// queueLocked records j's next run time.
func (c *Cron) queueLocked(j *Job) {
	if j.IsEnabled() && j.State.NextRunAtMs > 0 {
		heap.Push(&c.due, dueEntry{at: j.State.NextRunAtMs, id: j.ID})
	}
}

// live reports whether e still describes its job's next run.
func (c *Cron) liveLocked(e dueEntry) bool {
	j := c.jobs[e.id]
	return j != nil && j.IsEnabled() && j.State.NextRunAtMs == e.at
}

// nextLocked returns the earliest live entry, dropping stale ones.
func (c *Cron) nextLocked() (dueEntry, bool) {
	for c.due.Len() > 0 {
		if e := c.due[0]; c.liveLocked(e) {
			return e, true
		}
		heap.Pop(&c.due)
	}
	return dueEntry{}, false
}

// popDueLocked removes and returns the live entries due at or before now,
// one per job.
func (c *Cron) popDueLocked(now int64) []string {
	var ids []string
	seen := map[string]bool{}
	for {
		e, ok := c.nextLocked()
		if !ok || e.at > now {
			return ids
		}
		heap.Pop(&c.due)
		if !seen[e.id] {
			seen[e.id] = true
			ids = append(ids, e.id)
		}
	}
}
