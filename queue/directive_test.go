package queue

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

// want describes a parsed directive compactly: unset pointer fields are
// written as -1 / "".
type wantDirective struct {
	found, reset, standalone bool
	mode                     Mode
	debounce, cap            int
	drop                     DropPolicy
	rest                     string
	invalid                  []string
}

func (w wantDirective) check(t *testing.T, body string, d Directive) {
	t.Helper()
	got := wantDirective{found: d.Found, reset: d.Reset, standalone: d.Standalone, rest: d.Rest, invalid: d.Invalid, debounce: -1, cap: -1}
	if d.Override.Mode != nil {
		got.mode = *d.Override.Mode
	}
	if d.Override.DebounceMs != nil {
		got.debounce = *d.Override.DebounceMs
	}
	if d.Override.Cap != nil {
		got.cap = *d.Override.Cap
	}
	if d.Override.Drop != nil {
		got.drop = *d.Override.Drop
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("ParseDirective(%q)\n got %+v\nwant %+v", body, got, w)
	}
}

func TestParseDirective(t *testing.T) {
	none := func(rest string) wantDirective { return wantDirective{debounce: -1, cap: -1, rest: rest} }
	found := func(rest string) wantDirective {
		return wantDirective{found: true, standalone: rest == "", debounce: -1, cap: -1, rest: rest}
	}
	with := func(w wantDirective, f func(*wantDirective)) wantDirective { f(&w); return w }

	cases := []struct {
		body string
		want wantDirective
	}{
		// No directive: the body comes back trimmed, not collapsed.
		{"hello world", none("hello world")},
		{"  a  b \n", none("a  b")},
		{"", none("")},
		{"/queuex collect", none("/queuex collect")},
		{"a/queue collect", none("a/queue collect")},
		{"see https://x.com/queue/1", none("see https://x.com/queue/1")},
		{"/queue-collect", none("/queue-collect")},

		// OpenClaw's directive tests.
		{"please /queue interrupt now", with(found("please now"), func(w *wantDirective) { w.mode = ModeInterrupt })},
		{"please /queue steer now", with(found("please now"), func(w *wantDirective) { w.mode = ModeSteer })},
		{"please /queue steer+backlog debounce:2s cap:5 drop:summarize now", with(found("please now"), func(w *wantDirective) {
			w.mode, w.debounce, w.cap, w.drop = ModeSteerBacklog, 2000, 5, DropSummarize
		})},
		{"/queue collect debounce:bogus cap:zero drop:maybe", with(found(""), func(w *wantDirective) {
			w.mode, w.invalid = ModeCollect, []string{"debounce:bogus", "cap:zero", "drop:maybe"}
		})},
		{"/queue interrupt", with(found(""), func(w *wantDirective) { w.mode = ModeInterrupt })},
		{"/queue collect debounce:2s cap:5 drop:old", with(found(""), func(w *wantDirective) {
			w.mode, w.debounce, w.cap, w.drop = ModeCollect, 2000, 5, DropOld
		})},
		{"/queue reset", with(found(""), func(w *wantDirective) { w.reset = true })},
		{"/queue collect cap:1e3", with(found(""), func(w *wantDirective) { w.mode, w.invalid = ModeCollect, []string{"cap:1e3"} })},
		{"/queue collect cap:0x10", with(found(""), func(w *wantDirective) { w.mode, w.invalid = ModeCollect, []string{"cap:0x10"} })},
		{"/queue collect cap:4.9", with(found(""), func(w *wantDirective) { w.mode, w.invalid = ModeCollect, []string{"cap:4.9"} })},
		{"/queue backlog", with(found("backlog"), func(w *wantDirective) { w.invalid = []string{"backlog"} })},
		{"/queue", found("")},
		{"hello /queue followup unknown-token cap:5 world", with(found("hello unknown-token cap:5 world"), func(w *wantDirective) {
			w.mode = ModeFollowup
		})},
		{"fix this /queue plz explain", with(found("fix this plz explain"), func(w *wantDirective) { w.invalid = []string{"plz"} })},

		// Reset words, any case; reset ends the directive and wins.
		{"/queue default", with(found(""), func(w *wantDirective) { w.reset = true })},
		{"/queue CLEAR", with(found(""), func(w *wantDirective) { w.reset = true })},
		{"/queue collect cap:3 reset thanks", with(found("thanks"), func(w *wantDirective) { w.reset = true })},
		{"/queue cap:0 reset", with(found(""), func(w *wantDirective) { w.reset = true })},

		// Matching: case, separators, position.
		{"/QUEUE Coalesce", with(found(""), func(w *wantDirective) { w.mode = ModeCollect })},
		{"/queue: collect", with(found(""), func(w *wantDirective) { w.mode = ModeCollect })},
		{"/queue:collect", with(found(""), func(w *wantDirective) { w.mode = ModeCollect })},
		{"/queue\tfollowup\u3000more", with(found("more"), func(w *wantDirective) { w.mode = ModeFollowup })},
		{"hi\u00a0/queue abort", with(found("hi"), func(w *wantDirective) { w.mode = ModeInterrupt })},
		{"x/queue y /queue collect", with(found("x/queue y"), func(w *wantDirective) { w.mode = ModeCollect })},
		{"/queue collect /queue followup", with(found("/queue followup"), func(w *wantDirective) { w.mode = ModeCollect })},
		{"line one\nline two /queue collect\n\nline  three", with(found("line one line two line three"), func(w *wantDirective) { w.mode = ModeCollect })},
		{"fix this /queue", found("fix this")},

		// Every token form, any case.
		{"/queue Debounce=500 CAP=3 Drop=Newest FOLLOWUP", with(found(""), func(w *wantDirective) {
			w.mode, w.debounce, w.cap, w.drop = ModeFollowup, 500, 3, DropNew
		})},
		{"/queue drop:summary", with(found(""), func(w *wantDirective) { w.drop = DropSummarize })},
		{"/queue drop:oldest", with(found(""), func(w *wantDirective) { w.drop = DropOld })},
		{"/queue cap:1", with(found(""), func(w *wantDirective) { w.cap = 1 })},
		{"/queue cap:0", with(found(""), func(w *wantDirective) { w.invalid = []string{"cap:0"} })},
		{"/queue cap:-2", with(found(""), func(w *wantDirective) { w.invalid = []string{"cap:-2"} })},
		{"/queue cap:+2", with(found(""), func(w *wantDirective) { w.invalid = []string{"cap:+2"} })},
		{"/queue cap:99999999999999999999999", with(found(""), func(w *wantDirective) { w.invalid = []string{"cap:99999999999999999999999"} })},
		{"/queue cap:", with(found(""), func(w *wantDirective) { w.invalid = []string{"cap:"} })},
		{"/queue cap", with(found("cap"), func(w *wantDirective) { w.invalid = []string{"cap"} })}, // no value: not an option
		{"/queue capacity:3", with(found("capacity:3"), func(w *wantDirective) { w.invalid = []string{"capacity:3"} })},

		// Repeats: the last one counts.
		{"/queue collect followup", with(found(""), func(w *wantDirective) { w.mode = ModeFollowup })},
		{"/queue cap:2 cap:3", with(found(""), func(w *wantDirective) { w.cap = 3 })},
		{"/queue debounce:bogus debounce:2s", with(found(""), func(w *wantDirective) { w.debounce = 2000 })},
		{"/queue debounce:2s debounce:bogus", with(found(""), func(w *wantDirective) { w.invalid = []string{"debounce:bogus"} })},
	}
	for _, tc := range cases {
		tc.want.check(t, tc.body, ParseDirective(tc.body))
	}
}

func TestParseDirectiveDurations(t *testing.T) {
	cases := []struct {
		value string
		ms    int // -1: invalid
	}{
		{"500", 500},
		{"250ms", 250},
		{"2s", 2000},
		{"2S", 2000},
		{"1.5s", 1500},
		{"0.5s", 500},
		{"2m", 120_000},
		{"1h", 3_600_000},
		{"1d", 86_400_000},
		{"1.0005s", 1001}, // rounded to whole milliseconds
		{"0", 0},          // OpenClaw rejects 0; Switchboard does not
		{"0ms", 0},
		{"", -1},
		{"-5", -1},
		{"bogus", -1},
		{"1.s", -1},
		{".5s", -1},
		{"5x", -1},
		{"1e3", -1},
		{"2 s", -1},
		{"1ms5", -1},
		{"10000000000d", -1}, // beyond what a duration holds
	}
	for _, tc := range cases {
		body := "/queue debounce:" + tc.value
		d := ParseDirective(body)
		want := wantDirective{found: true, standalone: true, debounce: tc.ms, cap: -1}
		if tc.ms < 0 {
			want.invalid = []string{"debounce:" + tc.value}
		}
		if tc.value == "2 s" { // "s" is a separate token, which stops the directive
			want = wantDirective{found: true, debounce: 2, cap: -1, rest: "s"}
		}
		want.check(t, body, d)
	}
	// debounce=1:30 keeps what is between the first and second separator,
	// as OpenClaw's split(/[:=]/)[1] does.
	if d := ParseDirective("/queue debounce=1:30"); d.Override.DebounceMs == nil || *d.Override.DebounceMs != 1 {
		t.Errorf("debounce=1:30 = %+v", d.Override)
	}
}

func TestDirectiveDescribe(t *testing.T) {
	describe := func(body string, session Override) string {
		d := ParseDirective(body)
		s := Resolve(Override{}, session, Config{}, "")
		if !d.Reset {
			s = Resolve(Override{}, d.Override, Config{}, "")
		}
		return d.Describe(s)
	}
	cases := []struct{ body, want string }{
		{"hello", ""},
		{"/queue collect debounce:2s cap:25 drop:summarize", "Queue mode set to collect (debounce 2s, cap 25, drop summarize)."},
		{"/queue interrupt", "Queue mode set to interrupt (debounce 1s, cap 20, drop summarize)."},
		{"/queue followup debounce:1500", "Queue mode set to followup (debounce 1.5s, cap 20, drop summarize)."},
		{"/queue debounce:500 drop:old", "Queue settings updated (mode collect, debounce 500ms, cap 20, drop old)."},
		{"/queue cap:3 debounce:2m", "Queue settings updated (mode collect, debounce 2m, cap 3, drop summarize)."},
		{"/queue reset", "Queue settings reset to defaults."},
		{"/queue", "Current queue settings: mode=collect, debounce=1000ms, cap=20, drop=summarize.\n" +
			"Options: modes steer, followup, collect, steer-backlog, interrupt; debounce:<ms|s|m>, cap:<n>, drop:old|new|summarize; reset."},
		{"/queue collect debounce:bogus cap:zero drop:maybe",
			`Invalid debounce "bogus". Use ms/s/m (e.g. debounce:1500ms, debounce:2s). ` +
				`Invalid cap "zero". Use a positive integer (e.g. cap:10). ` +
				`Invalid drop policy "maybe". Use drop:old, drop:new, or drop:summarize.`},
		{"/queue backlog", `Unrecognized queue mode "backlog". Valid modes: steer, followup, collect, steer-backlog, interrupt.`},
		{"/queue collect cap:4.9", `Invalid cap "4.9". Use a positive integer (e.g. cap:10).`},
	}
	for _, tc := range cases {
		if got := describe(tc.body, Override{}); got != tc.want {
			t.Errorf("Describe(%q)\n got %q\nwant %q", tc.body, got, tc.want)
		}
	}
	// The status reply shows the session's settings.
	status := ParseDirective("/queue").Describe(Settings{Mode: ModeCollect, Debounce: 1500 * time.Millisecond, Cap: 9, Drop: DropSummarize})
	if !strings.HasPrefix(status, "Current queue settings: mode=collect, debounce=1500ms, cap=9, drop=summarize.") {
		t.Errorf("status = %q", status)
	}
}

func TestFormatDebounceRoundTrips(t *testing.T) {
	cases := map[time.Duration]string{
		0:                       "0ms",
		999 * time.Millisecond:  "999ms",
		time.Second:             "1s",
		1500 * time.Millisecond: "1.5s",
		1001 * time.Millisecond: "1.001s",
		time.Minute:             "1m",
		90 * time.Second:        "90s",
		2 * time.Minute:         "2m",
		time.Hour:               "60m",
	}
	for d, want := range cases {
		got := formatDebounce(d)
		if got != want {
			t.Errorf("formatDebounce(%v) = %q, want %q", d, got, want)
		}
		if ms, ok := parseDebounceMs(got); !ok || int64(ms) != d.Milliseconds() {
			t.Errorf("parseDebounceMs(%q) = %d, %v; want %d", got, ms, ok, d.Milliseconds())
		}
	}
}

func FuzzParseDirective(f *testing.F) {
	for _, s := range []string{"/queue collect", "please /queue steer+backlog debounce:2s cap:5 drop:summarize now", "/queue:", "x /queue\u3000reset y", "/queue cap:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		d := ParseDirective(body)
		if d.Standalone != (d.Found && d.Rest == "") {
			t.Fatalf("Standalone = %v with Found %v and Rest %q", d.Standalone, d.Found, d.Rest)
		}
		if d.Reset && !d.Override.IsZero() {
			t.Fatalf("reset with settings: %+v", d.Override)
		}
		if d.Override.Cap != nil && *d.Override.Cap < 1 {
			t.Fatalf("cap %d", *d.Override.Cap)
		}
		if d.Override.DebounceMs != nil && *d.Override.DebounceMs < 0 {
			t.Fatalf("debounce %d", *d.Override.DebounceMs)
		}
		if d.Found && len(d.Rest) > len(body) {
			t.Fatalf("Rest %q longer than body %q", d.Rest, body)
		}
		_ = d.Describe(Resolve(Override{}, d.Override, Config{}, ""))
	})
}

func BenchmarkParseDirective(b *testing.B) {
	b.Run("directive", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = ParseDirective("please /queue steer+backlog debounce:2s cap:5 drop:summarize now")
		}
	})
	b.Run("plain message", func(b *testing.B) {
		body := "Could you summarise the thread above and send it to /tmp/notes? Thanks a lot."
		b.ReportAllocs()
		for b.Loop() {
			_ = ParseDirective(body)
		}
	})
}
