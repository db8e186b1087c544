package transcript_test

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/transcript"
)

func TestCheckToolPairing(t *testing.T) {
	a := func(calls ...string) core.Message {
		var blocks []core.ContentBlock
		for _, id := range calls {
			blocks = append(blocks, call(id, "ls"))
		}
		return assistant(1, blocks...)
	}
	r := func(id string) core.Message { return result(id, "ls", "out", 2) }
	for _, tc := range []struct {
		name string
		msgs []core.Message
		ok   bool
	}{
		{"empty", nil, true},
		{"paired", []core.Message{user("q", 0), a("x", "y"), r("x"), r("y"), a()}, true},
		{"result first", []core.Message{r("x"), user("q", 0)}, false},
		{"missing result at the end", []core.Message{a("x")}, false},
		{"missing result before a user", []core.Message{a("x"), user("q", 0)}, false},
		{"out of order", []core.Message{a("x", "y"), r("y"), r("x")}, false},
		{"repeated id", []core.Message{a("x", "x"), r("x"), r("x")}, false},
		{"extra result", []core.Message{a("x"), r("x"), r("x")}, false},
	} {
		err := transcript.CheckToolPairing(tc.msgs)
		if (err == nil) != tc.ok {
			t.Errorf("%s: CheckToolPairing = %v, want ok %v", tc.name, err, tc.ok)
		}
		if !tc.ok {
			if fixed := transcript.RepairToolPairing(tc.msgs); transcript.CheckToolPairing(fixed) != nil {
				t.Errorf("%s: RepairToolPairing output still fails: %v", tc.name, transcript.CheckToolPairing(fixed))
			}
		}
	}
}
