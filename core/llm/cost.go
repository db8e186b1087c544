package llm

import "github.com/switchboardhq/switchboard/core"

// perMillion converts ModelCost prices, which are per million tokens.
const perMillion = 1e6

// ComputeCost prices the token counts of u at c's per-million-token rates:
// each category is tokens × price / 1e6, and Total is their sum.
func ComputeCost(u core.Usage, c ModelCost) core.Cost {
	cost := core.Cost{
		Input:      float64(u.Input) * c.Input / perMillion,
		Output:     float64(u.Output) * c.Output / perMillion,
		CacheRead:  float64(u.CacheRead) * c.CacheRead / perMillion,
		CacheWrite: float64(u.CacheWrite) * c.CacheWrite / perMillion,
	}
	cost.Total = cost.Input + cost.Output + cost.CacheRead + cost.CacheWrite
	return cost
}
