package queue

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/prompt"
)

const evKey = core.SessionKey("agent:main:telegram:direct:42")

func newTestEvents() *SystemEvents {
	return &SystemEvents{Now: func() time.Time { return testEpoch }}
}

func texts(evs []prompt.SystemEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Text
	}
	return out
}

func TestSystemEventsEnqueue(t *testing.T) {
	q := newTestEvents()
	if !q.Enqueue(evKey, "  Cron job finished  \n", EventOptions{Trusted: true}) {
		t.Fatal("not queued")
	}
	if !q.Enqueue(evKey, "WhatsApp connected", EventOptions{TS: 42}) {
		t.Fatal("not queued")
	}
	want := []prompt.SystemEvent{
		{Text: "Cron job finished", TS: testEpoch.UnixMilli(), Trusted: true},
		{Text: "WhatsApp connected", TS: 42},
	}
	if got := q.Peek(evKey); !reflect.DeepEqual(got, want) {
		t.Errorf("Peek = %+v, want %+v", got, want)
	}
	if q.Len(evKey) != 2 || q.Len("other") != 0 {
		t.Errorf("Len = %d", q.Len(evKey))
	}
	var zero SystemEvents // the zero value works and stamps with time.Now
	before := time.Now().UnixMilli()
	zero.Enqueue(evKey, "x", EventOptions{})
	if ts := zero.Peek(evKey)[0].TS; ts < before {
		t.Errorf("zero value stamped %d, before %d", ts, before)
	}
}

func TestSystemEventsIgnoresEmpty(t *testing.T) {
	q := newTestEvents()
	for _, tc := range []struct {
		key  core.SessionKey
		text string
	}{{evKey, ""}, {evKey, " \n\t\u00a0"}, {"", "text"}, {"  ", "text"}} {
		if q.Enqueue(tc.key, tc.text, EventOptions{}) {
			t.Errorf("Enqueue(%q, %q) queued", tc.key, tc.text)
		}
	}
	if len(q.queues) != 0 {
		t.Errorf("ignored events left %d keys behind", len(q.queues))
	}
}

func TestSystemEventsConsecutiveDedupe(t *testing.T) {
	q := newTestEvents()
	got := []bool{
		q.Enqueue(evKey, "a", EventOptions{}),
		q.Enqueue(evKey, " a ", EventOptions{}), // same text once trimmed
		q.Enqueue(evKey, "b", EventOptions{}),
		q.Enqueue(evKey, "a", EventOptions{}), // not consecutive: kept
		q.Enqueue(evKey, "a", EventOptions{Trusted: true}),
	}
	if want := []bool{true, false, true, true, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("queued = %v, want %v", got, want)
	}
	if got := texts(q.Peek(evKey)); !reflect.DeepEqual(got, []string{"a", "b", "a"}) {
		t.Errorf("events = %v", got)
	}
	// Keys are independent.
	if !q.Enqueue("other", "a", EventOptions{}) {
		t.Error("a different key shares duplicate tracking")
	}
}

func TestSystemEventsMax(t *testing.T) {
	q := newTestEvents()
	for i := 1; i <= 25; i++ {
		if !q.Enqueue(evKey, fmt.Sprintf("event %d", i), EventOptions{}) {
			t.Fatalf("event %d not queued", i)
		}
	}
	evs := q.Peek(evKey)
	if len(evs) != MaxSystemEvents || evs[0].Text != "event 6" || evs[19].Text != "event 25" {
		t.Errorf("kept %d: %v", len(evs), texts(evs))
	}
	// Duplicate tracking follows the newest event, not the dropped ones.
	if q.Enqueue(evKey, "event 25", EventOptions{}) || !q.Enqueue(evKey, "event 1", EventOptions{}) {
		t.Error("duplicate tracking is off after overflow")
	}
}

func TestSystemEventsDrain(t *testing.T) {
	q := newTestEvents()
	q.Enqueue(evKey, "a", EventOptions{})
	q.Enqueue(evKey, "b", EventOptions{})
	if got := texts(q.Drain(evKey)); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("Drain = %v", got)
	}
	if q.Len(evKey) != 0 || len(q.queues) != 0 || q.Drain(evKey) != nil || q.Peek(evKey) != nil {
		t.Error("Drain left state behind")
	}
	if !q.Enqueue(evKey, "b", EventOptions{}) {
		t.Error("Drain did not reset duplicate tracking")
	}
}

func TestSystemEventsConsume(t *testing.T) {
	t.Run("the inspected prefix", func(t *testing.T) {
		q := newTestEvents()
		for _, s := range []string{"a", "b", "c"} {
			q.Enqueue(evKey, s, EventOptions{})
		}
		if n := len(q.Peek(evKey)); n != 3 {
			t.Fatalf("peeked %d", n)
		}
		q.Enqueue(evKey, "d", EventOptions{}) // arrives while the prompt is built
		if got := q.Consume(evKey, 3); got != 3 {
			t.Errorf("Consume = %d", got)
		}
		if got := texts(q.Peek(evKey)); !reflect.DeepEqual(got, []string{"d"}) {
			t.Errorf("left %v", got)
		}
		if q.Enqueue(evKey, "d", EventOptions{}) {
			t.Error("duplicate tracking lost while events remain")
		}
	})
	t.Run("part of the peek", func(t *testing.T) {
		q := newTestEvents()
		for _, s := range []string{"a", "b", "c"} {
			q.Enqueue(evKey, s, EventOptions{})
		}
		q.Peek(evKey)
		q.Consume(evKey, 2)
		if got := texts(q.Peek(evKey)); !reflect.DeepEqual(got, []string{"c"}) {
			t.Errorf("left %v", got)
		}
	})
	t.Run("never more than the peek showed", func(t *testing.T) {
		q := newTestEvents()
		q.Enqueue(evKey, "a", EventOptions{})
		q.Peek(evKey)
		q.Enqueue(evKey, "b", EventOptions{})
		if got := q.Consume(evKey, 5); got != 1 {
			t.Errorf("Consume(5) after a peek of 1 removed %d", got)
		}
		if got := texts(q.Peek(evKey)); !reflect.DeepEqual(got, []string{"b"}) {
			t.Errorf("left %v", got)
		}
	})
	t.Run("inspected events dropped by the limit are not replaced", func(t *testing.T) {
		q := newTestEvents()
		for i := range MaxSystemEvents {
			q.Enqueue(evKey, "old "+strconv.Itoa(i), EventOptions{})
		}
		q.Peek(evKey)
		for i := range 5 { // pushes out 5 inspected events
			q.Enqueue(evKey, "new "+strconv.Itoa(i), EventOptions{})
		}
		if got := q.Consume(evKey, MaxSystemEvents); got != MaxSystemEvents-5 {
			t.Errorf("Consume removed %d, want %d", got, MaxSystemEvents-5)
		}
		if got := texts(q.Peek(evKey)); !reflect.DeepEqual(got, []string{"new 0", "new 1", "new 2", "new 3", "new 4"}) {
			t.Errorf("left %v", got)
		}
	})
	t.Run("everything consumed forgets the key", func(t *testing.T) {
		q := newTestEvents()
		q.Enqueue(evKey, "a", EventOptions{})
		q.Peek(evKey)
		q.Consume(evKey, 1)
		if len(q.queues) != 0 {
			t.Error("state kept for an empty key")
		}
		if !q.Enqueue(evKey, "a", EventOptions{}) {
			t.Error("duplicate tracking not reset")
		}
	})
	t.Run("no peek, nothing consumed", func(t *testing.T) {
		q := newTestEvents()
		q.Enqueue(evKey, "a", EventOptions{})
		if q.Consume(evKey, 1) != 0 || q.Consume("missing", 1) != 0 || q.Len(evKey) != 1 {
			t.Error("Consume without a Peek removed events")
		}
		q.Peek(evKey)
		if q.Consume(evKey, 0) != 0 || q.Consume(evKey, -1) != 0 {
			t.Error("Consume of nothing removed events")
		}
	})
	t.Run("a peek before a drain does not carry over", func(t *testing.T) {
		q := newTestEvents()
		q.Enqueue(evKey, "a", EventOptions{})
		q.Peek(evKey)
		q.Drain(evKey)
		q.Enqueue(evKey, "b", EventOptions{})
		if q.Consume(evKey, 1) != 0 || q.Len(evKey) != 1 {
			t.Error("Consume removed an event queued after a Drain")
		}
	})
	t.Run("a second consume removes nothing more", func(t *testing.T) {
		q := newTestEvents()
		q.Enqueue(evKey, "a", EventOptions{})
		q.Enqueue(evKey, "b", EventOptions{})
		q.Peek(evKey)
		q.Enqueue(evKey, "c", EventOptions{})
		q.Consume(evKey, 2)
		if q.Consume(evKey, 2) != 0 || q.Len(evKey) != 1 {
			t.Error("a repeated Consume removed an event the Peek did not show")
		}
	})
}

func TestSystemEventsPeekIsACopy(t *testing.T) {
	q := newTestEvents()
	q.Enqueue(evKey, "a", EventOptions{})
	evs := q.Peek(evKey)
	evs[0].Text = "changed"
	if q.Peek(evKey)[0].Text != "a" {
		t.Error("Peek shares its slice")
	}
}

func TestSystemEventsContextKey(t *testing.T) {
	q := newTestEvents()
	if q.ContextChanged(evKey, "") {
		t.Error("no events and no context key reported a change")
	}
	if !q.ContextChanged(evKey, "model:a") {
		t.Error("a new context key was not a change")
	}
	q.Enqueue(evKey, "Model switched to A", EventOptions{ContextKey: "  Model:A "})
	if q.ContextChanged(evKey, "MODEL:a") {
		t.Error("context key was not stored lower-cased and trimmed")
	}
	// Even a duplicate that is not queued moves the context key along.
	q.Enqueue(evKey, "Model switched to A", EventOptions{ContextKey: "model:b"})
	if q.ContextChanged(evKey, "model:b") || !q.ContextChanged(evKey, "model:a") {
		t.Error("context key not updated by a duplicate")
	}
	q.Drain(evKey)
	if !q.ContextChanged(evKey, "model:b") {
		t.Error("Drain did not reset the context key")
	}
}

// TestSystemEventsSessionScoped ports system-events.test.ts "does not leak
// session-scoped events into main", formatting with core/prompt.
func TestSystemEventsSessionScoped(t *testing.T) {
	q := NewSystemEvents()
	const discord, mainKey = core.SessionKey("discord:group:123"), core.SessionKey("agent:main:main")
	q.Enqueue(discord, "Discord reaction added: ✅", EventOptions{ContextKey: "discord:reaction:added:msg:user:✅", Trusted: true})
	if q.Peek(mainKey) != nil || !reflect.DeepEqual(texts(q.Peek(discord)), []string{"Discord reaction added: ✅"}) {
		t.Fatal("events leaked between sessions")
	}
	if got := prompt.FormatSystemEvents(q.Drain(mainKey), nil, time.UTC); got != "" {
		t.Errorf("main session got %q", got)
	}
	got := prompt.FormatSystemEvents(q.Drain(discord), nil, time.UTC)
	if !regexp.MustCompile(`^System: \[[^\]]+\] Discord reaction added: ✅$`).MatchString(got) {
		t.Errorf("formatted %q", got)
	}
	if q.Peek(discord) != nil {
		t.Error("drained events remain")
	}
}

func TestSystemEventsConcurrent(t *testing.T) {
	q := NewSystemEvents()
	const producers, perProducer = 8, MaxSystemEvents // never more than the limit per key
	var queued, drained atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // a consumer draining every key while producers run
		defer close(done)
		for {
			for p := range producers {
				k := core.SessionKey("k" + strconv.Itoa(p))
				if evs := q.Peek(k); len(evs) > 0 {
					drained.Add(int64(q.Consume(k, len(evs))))
				}
				drained.Add(int64(len(q.Drain(k))))
				q.Len(k)
				q.ContextChanged(k, "x")
			}
			select {
			case <-stop:
				return
			default:
			}
		}
	}()
	for p := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := core.SessionKey("k" + strconv.Itoa(p))
			for i := range perProducer {
				if q.Enqueue(k, "event "+strconv.Itoa(i), EventOptions{ContextKey: "x"}) {
					queued.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-done
	for p := range producers {
		drained.Add(int64(len(q.Drain(core.SessionKey("k" + strconv.Itoa(p))))))
	}
	if queued.Load() != producers*perProducer || drained.Load() != queued.Load() {
		t.Errorf("queued %d, drained %d, want %d each", queued.Load(), drained.Load(), producers*perProducer)
	}
	if len(q.queues) != 0 {
		t.Errorf("%d keys left behind", len(q.queues))
	}
}

func BenchmarkSystemEventsEnqueueDrain(b *testing.B) {
	q := NewSystemEvents()
	keys := make([]core.SessionKey, 64)
	for i := range keys {
		keys[i] = core.SessionKey("agent:main:telegram:direct:" + strconv.Itoa(i))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i%len(keys)]
		q.Enqueue(k, "Cron job \"daily-report\" completed (exit 0)", EventOptions{TS: 1, Trusted: true})
		q.Enqueue(k, "WhatsApp gateway connected as +15550001111.", EventOptions{TS: 2, ContextKey: "whatsapp:connected"})
		_ = q.Drain(k)
		i++
	}
}
