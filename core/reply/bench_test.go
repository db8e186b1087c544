package reply

import (
	"strings"
	"testing"
)

func BenchmarkBuild(b *testing.B) {
	msg := assistant("[[reply_to_current]] Here is the summary you asked for.\n\n" +
		strings.Repeat("- a point worth making, with some detail\n", 20) +
		"MEDIA:https://example.com/chart.png\n")
	b.ReportAllocs()
	for b.Loop() {
		_ = Build(msg, Options{})
	}
}

func BenchmarkStripHeartbeatToken(b *testing.B) {
	text := "All systems nominal, nothing to report. HEARTBEAT_OK"
	b.ReportAllocs()
	for b.Loop() {
		_ = StripHeartbeatToken(text, ModeHeartbeat, 0)
	}
}
