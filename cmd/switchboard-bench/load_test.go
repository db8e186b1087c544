package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPercentiles(t *testing.T) {
	v := make([]float64, 100)
	for i := range v {
		v[i] = float64(100 - i) // 100 … 1, unsorted
	}
	p := percentilesOf(v)
	if p.P50 != 51 || p.P90 != 91 || p.P99 != 100 || p.Max != 100 || p.N != 100 {
		t.Fatalf("percentiles = %+v", p)
	}
	if (percentilesOf(nil) != percentiles{}) {
		t.Fatal("empty sample")
	}
}

// The tracker counts one reply per marker, a second one as a duplicate, a
// reply older than one already seen in its session as out of order, and
// times both legs.
func TestTrackerCountsRepliesDuplicatesAndOrder(t *testing.T) {
	tr := newTracker()
	t0 := time.Now()
	w0 := tr.pushed("#m1-0", t0)
	tr.pushed("#m1-1", t0)
	tr.modelRequest("#m1-0", t0.Add(2*time.Millisecond))
	tr.modelRequest("#m1-0", t0.Add(50*time.Millisecond)) // a retry keeps the first
	tr.modelDone("#m1-0", t0.Add(3*time.Millisecond))
	tr.reply("ack #m1-1 ok")
	tr.reply("ack #m1-0 ok") // older than #m1-1: out of order
	tr.reply("ack #m1-0 ok") // duplicate
	tr.reply("no marker")
	select {
	case <-w0:
	default:
		t.Fatal("the waiter of #m1-0 was not woken")
	}
	if tr.replies["#m1-0"] != 2 || tr.replies["#m1-1"] != 1 || tr.order != 1 {
		t.Fatalf("replies %v, out of order %d", tr.replies, tr.order)
	}
	if len(tr.inLat) != 1 || tr.inLat[0] != 2 || len(tr.outLat) != 1 {
		t.Fatalf("latencies in %v out %v", tr.inLat, tr.outLat)
	}
}

func TestHistogramIsSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.svg")
	if err := writeHistogram(path, map[string][]float64{"a": {0.05, 1, 2, 1000, 1e6}, "b": {3}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(strings.NewReader(string(b)))
	rects := 0
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			rects++
		}
	}
	if rects != 60 || !strings.Contains(string(b), "a (n=5)") {
		t.Fatalf("rects = %d\n%s", rects, b)
	}
}
