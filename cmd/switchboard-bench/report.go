package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// writeJSON writes v, indented, to path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// writeHistogram writes an SVG histogram of two latency samples (in ms) on
// logarithmic buckets from 0.1 ms to 100 s.
func writeHistogram(path string, series map[string][]float64) error {
	const buckets, w, h, pad = 30, 720, 300, 40
	edge := func(i int) float64 { return 0.1 * math.Pow(10, float64(i)*6/buckets) }
	names := make([]string, 0, len(series))
	for n := range series {
		names = append(names, n)
	}
	sort.Strings(names)
	colors := []string{"#3b82f6", "#f59e0b", "#10b981"}
	counts := map[string][]int{}
	top := 1
	for _, n := range names {
		c := make([]int, buckets)
		for _, v := range series[n] {
			i := int(math.Log10(max(v, 0.1)/0.1) * buckets / 6)
			c[min(max(i, 0), buckets-1)]++
		}
		counts[n] = c
		for _, k := range c {
			top = max(top, k)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, h+pad)
	bw := float64(w-2*pad) / buckets / float64(max(len(names), 1))
	for si, n := range names {
		for i, k := range counts[n] {
			bh := float64(h-2*pad) * float64(k) / float64(top)
			x := float64(pad) + float64(i)*float64(w-2*pad)/buckets + float64(si)*bw
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>`+"\n", x, float64(h-pad)-bh, bw, bh, colors[si%len(colors)])
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" fill="%s">%s (n=%d)</text>`+"\n", pad, 16+14*si, colors[si%len(colors)], n, len(series[n]))
	}
	for i := 0; i <= buckets; i += 5 {
		x := float64(pad) + float64(i)*float64(w-2*pad)/buckets
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%g ms</text>`+"\n", x, h-pad+14, edge(i))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d">count (max %d) per logarithmic bucket</text>`+"\n</svg>\n", pad, h-pad+30, top)
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
