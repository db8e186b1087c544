package agent

import "testing"

func TestCompactionBudget(t *testing.T) {
	for _, c := range []struct {
		name                          string
		window, system, reserve, keep int
		wantReserve, wantKeep         int
	}{
		{"large window keeps the configured sizes", 200000, 3000, 20000, 20000, 20000, 20000},
		{"unknown window", 0, 3000, 20000, 20000, 20000, 20000},
		{"local model", 8192, 0, 20000, 20000, 2048, 3072},
		{"a large system prompt leaves less to keep", 8192, 2000, 20000, 20000, 2048, 2072},
		{"smaller configured sizes stay", 8192, 0, 1000, 500, 1000, 500},
		{"system prompt fills the window", 4096, 5000, 20000, 20000, 1024, 0},
	} {
		r, k := compactionBudget(c.window, c.system, c.reserve, c.keep)
		if r != c.wantReserve || k != c.wantKeep {
			t.Errorf("%s: compactionBudget(%d, %d, %d, %d) = %d, %d; want %d, %d", c.name, c.window, c.system, c.reserve, c.keep, r, k, c.wantReserve, c.wantKeep)
		}
		if c.window > 0 && k+c.system >= c.window-r && k > 0 {
			t.Errorf("%s: keeping %d tokens would be over the threshold again", c.name, k)
		}
	}
}
