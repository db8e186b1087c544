package llm_test

import (
	"math"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/llm"
)

func TestComputeCost(t *testing.T) {
	// The seed 000 §3.2 example: claude-opus prices per million tokens,
	// input $15, output $75, cache write $18.75.
	got := llm.ComputeCost(core.Usage{Input: 1500, Output: 200, CacheWrite: 1500},
		llm.ModelCost{Input: 15, Output: 75, CacheRead: 1.5, CacheWrite: 18.75})
	want := core.Cost{Input: 0.0225, Output: 0.015, CacheRead: 0, CacheWrite: 0.028125, Total: 0.065625}
	for _, c := range [][2]float64{
		{got.Input, want.Input}, {got.Output, want.Output}, {got.CacheRead, want.CacheRead},
		{got.CacheWrite, want.CacheWrite}, {got.Total, want.Total},
	} {
		if math.Abs(c[0]-c[1]) > 1e-12 {
			t.Fatalf("ComputeCost = %+v, want %+v", got, want)
		}
	}
	if z := llm.ComputeCost(core.Usage{Input: 1e6}, llm.ModelCost{}); z != (core.Cost{}) {
		t.Errorf("unpriced model cost = %+v", z)
	}
	if c := llm.ComputeCost(core.Usage{CacheRead: 2_000_000}, llm.ModelCost{CacheRead: 0.3}); math.Abs(c.CacheRead-0.6) > 1e-12 || c.Total != c.CacheRead {
		t.Errorf("cache read cost = %+v", c)
	}
}
