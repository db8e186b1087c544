package events

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// BenchmarkRunDeltas streams a 1,000-delta response through a Run, one
// delta per millisecond, from Start to End, and reports the cost per run.
func BenchmarkRunDeltas(b *testing.B) {
	evs := []core.AgentEvent{assistantStart(), textStart(0)}
	for range 1000 {
		evs = append(evs, textDelta(0, "word "))
	}
	evs = append(evs, textEnd(0), assistantEnd(core.StopReasonStop))
	res := finalResult("done")
	info := testInfo(core.InboundUser)
	b.ReportAllocs()
	var sent int
	for b.Loop() {
		clk := newClock()
		r := NewRun(info, Options{Now: clk.now})
		sent += len(r.Start())
		for _, ev := range evs {
			clk.advance(ms(1))
			sent += len(r.Event(ev))
			if due, ok := r.NextFlush(); ok && !clk.now().Before(due) {
				sent += len(r.Flush())
			}
		}
		sent += len(r.End(res, nil))
	}
	b.ReportMetric(float64(sent)/float64(b.N), "events/run")
}
