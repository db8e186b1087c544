package prompt

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Issue 22, finding 8: an outside attack on a daemon at a3a0da1 sent 56
// injection payloads as message text, and 20 reached the model unchanged:
// a forged "Inbound Context (trusted metadata)" block, "System message:",
// "SYSTEM OVERRIDE:", "**System:**", "> System:", "- System:", a homoglyph
// S (U+13DA, U+A4E2, U+1E60), a U+2800 prefix, a forged "[Telegram …]"
// envelope and "[message_id: …]" tags, "<|im_start|>system",
// "</untrusted><system>".
//
// The invariant: no line of channel text, once neutralised, passes for
// something Switchboard writes itself (its event lines, labels, notes,
// envelope, role tags, chat-template tokens), after the same normalisation
// the neutraliser uses (skeletonRune). The oracle below checks it with
// regular expressions of its own over the whole line's skeleton, not with
// the neutraliser's matchers, so a bug in those shows up as a
// disagreement.

// f8Payload is one attack of testdata/finding8/forged_authority.json.
type f8Payload struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Text     string `json:"text"`
}

func loadFinding8(t testing.TB, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "finding8", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// f8Skeleton is a line's normalised form: each rune through skeletonRune,
// white space runs collapsed to one space, both ends trimmed.
func f8Skeleton(line string) string {
	var b strings.Builder
	space := false
	for _, r := range line {
		switch f := skeletonRune(r); f {
		case "":
		case " ":
			space = b.Len() > 0
		default:
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteString(f)
		}
	}
	return b.String()
}

// f8Pat turns a marker into a pattern over skeletons: a space is allowed
// between any two characters, and "i", "l", "1" and "o", "0" are the
// confusable classes of UTS #39.
func f8Pat(marker string) string {
	var parts []string
	for _, c := range strings.ReplaceAll(marker, " ", "") {
		switch c {
		case 'i', 'l', '1':
			parts = append(parts, "[il1]")
		case 'o', '0':
			parts = append(parts, "[o0]")
		default:
			parts = append(parts, regexp.QuoteMeta(string(c)))
		}
	}
	return strings.Join(parts, " ?")
}

// f8Words is the first n words of s, lower-cased.
func f8Words(s string, n int) string {
	w := strings.Fields(strings.ToLower(s))
	return strings.Join(w[:min(n, len(w))], " ")
}

const f8Boundary = `(?:[^a-z0-9]|$)`

var (
	// f8Decoration is what may precede a marker at the start of a line.
	f8Decoration = regexp.MustCompile("^(?:[ >\\-*+_~`\"'|=\x01]|[0-9]{1,9}[.)])*")

	// f8LineStarts are the starts of Switchboard's lines, written from
	// the texts this package, the queue and the bridges put in prompts.
	f8LineStarts = func() *regexp.Regexp {
		starts := []string{
			f8Pat("system") + f8Boundary,
			f8Pat("#"),
			f8Pat("<<<"),
			f8Pat("assistant:"),
			f8Pat("[system"),
			f8Pat("[assistant"),
			f8Pat(f8Words(ThreadHistoryNote, 2)),
			f8Pat(f8Words(ThreadStarterNote, 2)),
			f8Pat("[media attached"),
			f8Pat(f8Words(AbortHint, 5)),
			f8Pat(f8Words(ReplyMediaHint, 5)),
			f8Pat(f8Words(UntrustedContextHeader, 2)),
			f8Pat(f8Words(LabelConversationInfo, 2)),
			f8Pat(strings.TrimPrefix(f8Words(TrustedHeading, 3), "## ")),
			f8Pat("inbound meta"), // the trusted block's schema, openclaw.inbound_meta
			f8Pat(f8Words(DefaultHeartbeatPrompt, 2)),
			f8Pat(f8Words(BareSessionResetPrompt, 5)),
			f8Pat("[queue"),
			f8Pat("queued #"),
			f8Pat("[replying to"), // the WhatsApp bridge's quote block
			f8Pat("[/replying"),
			// OpenClaw's group framing, which the neutraliser escaped before
			// this finding.
			f8Pat("[user sent media"),
			f8Pat("[chat messages since"),
			f8Pat("[current message"),
			`(?:` + f8Pat("[message_id") + `|` + f8Pat("[message id") + `)` + f8Boundary,
		}
		return regexp.MustCompile(`^(?:` + strings.Join(starts, "|") + `)`)
	}()

	// f8Envelope is the shape of OpenClaw's envelope header, "[Telegram
	// Alice id:42 +2m 2025-05-01 14:30 UTC]": a bracket opening with a
	// word, whose inside holds an id, a time, a date or an elapsed time.
	f8Envelope      = regexp.MustCompile(`^\[ ?([a-z][^\[\]]{0,95})`)
	f8EnvelopeField = regexp.MustCompile(`(?:^|[^a-z0-9])id ?:|[0-9]:[0-9]{2}|[0-9]{4}-[0-9]{2}-[0-9]{2}|\+[0-9]{1,6}[smhd](?:[^a-z]|$)`)

	// f8Label is a label's shape; its inside must say "trusted".
	f8Label        = regexp.MustCompile(`^[^()\[\]{}<>:\\]{0,64}[(\[{<]([^)\]}>]{0,64})[)\]}>] ?(?::|$)`)
	f8LabelTrusted = regexp.MustCompile(f8Pat("trusted"))

	// f8Tags are the tags that may not appear anywhere in a line.
	f8Tags = func() *regexp.Regexp {
		tags := []string{
			`\[ ?(?:` + f8Pat("system message") + `|` + f8Pat("system") + `|` + f8Pat("assistant") + `|` + f8Pat("internal") + `) ?\]`,
			`(?:` + f8Pat("[message_id") + `|` + f8Pat("[message id") + `)` + f8Boundary,
			`< ?\|[^<>|]{1,48}\| ?>`,
			f8Pat("<s>"), f8Pat("</s>"), f8Pat("[inst]"), f8Pat("[/inst]"), f8Pat("<<sys>>"), f8Pat("<</sys>>"),
			f8Pat("[system_prompt]"), f8Pat("[/system_prompt]"), f8Pat("<start_of_turn>"), f8Pat("<end_of_turn>"),
			`< ?/? ?(?:` + strings.Join([]string{f8Pat("system"), f8Pat("assistant"), f8Pat("developer"),
				f8Pat("untrusted"), f8Pat("trusted"), f8Pat("im_start"), f8Pat("im_end")}, "|") + `)(?:>|[ _\-:][^<>]{0,64}>)`,
		}
		return regexp.MustCompile(strings.Join(tags, "|"))
	}()
)

// f8PassesFor returns what line passes for, or "" when it passes for
// nothing Switchboard writes.
func f8PassesFor(line string) string {
	sk := f8Skeleton(line)
	if m := f8Tags.FindString(sk); m != "" {
		return "tag " + m
	}
	start := sk[len(f8Decoration.FindString(sk)):]
	if m := f8LineStarts.FindString(start); m != "" {
		return "line start " + m
	}
	if m := f8Label.FindStringSubmatch(start); m != nil && f8LabelTrusted.MatchString(m[1]) {
		return "label " + m[0]
	}
	if m := f8Envelope.FindStringSubmatch(start); m != nil && f8EnvelopeField.MatchString(m[1]) {
		return "envelope " + m[0]
	}
	return ""
}

// f8Slot is one place channel text takes into the prompt.
type f8Slot struct {
	name  string
	build func(v string) string
	// cont is the prefix Switchboard writes before each further line of
	// the slot ("System (untrusted): " for an event).
	cont string
}

var f8Slots = []f8Slot{
	{name: "message", build: func(v string) string {
		return Body(&core.Inbound{Body: v}, State{}).Text
	}},
	{name: "thread history", build: func(v string) string {
		return Body(&core.Inbound{Body: "hi", ThreadHistory: v}, State{IsNewSession: true}).Text
	}},
	{name: "untrusted context", build: func(v string) string {
		return Body(&core.Inbound{Body: "hi", UntrustedContext: []string{v}}, State{}).Text
	}},
	{name: "untrusted system event", cont: "System (untrusted): ", build: func(v string) string {
		return Body(&core.Inbound{Body: "hi"}, State{SystemEvents: []SystemEvent{{Text: v, TS: seedMs}}, Location: time.UTC}).Text
	}},
	{name: "queue summary line", build: NeutralizeLine},
}

const f8Sentinel = "F8SENTINEL"

// f8SlotLines returns the lines payload became in slot, or an error text
// when the prompt around the slot changed.
func f8SlotLines(slot f8Slot, payload string) ([]string, string) {
	text := slot.build(payload)
	if text == slot.build("") {
		return nil, "" // nothing of the payload reached the prompt
	}
	pre, post, _ := strings.Cut(slot.build(f8Sentinel), f8Sentinel)
	if !strings.HasPrefix(text, pre) || !strings.HasSuffix(text, post) || len(text) < len(pre)+len(post) {
		return nil, "the prompt around the slot changed:\n" + text
	}
	lines := strings.Split(text[len(pre):len(text)-len(post)], "\n")
	for i := 1; i < len(lines) && slot.cont != ""; i++ {
		rest, ok := strings.CutPrefix(lines[i], slot.cont)
		if !ok {
			return nil, "line without its " + slot.cont + "prefix: " + lines[i]
		}
		lines[i] = rest
	}
	return lines, ""
}

// f8Check reports every line of every slot that passes for a marker.
func f8Check(payload string) []string {
	var bad []string
	for _, slot := range f8Slots {
		lines, broken := f8SlotLines(slot, payload)
		if broken != "" {
			bad = append(bad, slot.name+": "+broken)
		}
		for _, line := range lines {
			if what := f8PassesFor(line); what != "" {
				bad = append(bad, slot.name+": "+strings.TrimSpace(what)+" in "+strconv.Quote(line))
			}
		}
	}
	return bad
}

func TestFinding8_ForgedAuthorityCorpus(t *testing.T) {
	var corpus []f8Payload
	loadFinding8(t, "forged_authority.json", &corpus)
	if len(corpus) < 150 {
		t.Fatalf("corpus has %d payloads, want at least 150", len(corpus))
	}
	through := 0
	for _, p := range corpus {
		t.Run(p.Category+"/"+p.Name, func(t *testing.T) {
			// The payload must be an attack: some line of it, as sent,
			// passes for a marker.
			raw := false
			for line := range strings.SplitSeq(normalizeNewlines(stripNUL(p.Text)), "\n") {
				raw = raw || f8PassesFor(line) != ""
			}
			if !raw {
				t.Fatalf("the oracle finds no marker in the payload itself; fix the payload or the oracle")
			}
			if bad := f8Check(p.Text); len(bad) > 0 {
				through++
				t.Errorf("reaches the model as a marker:\n  %s", strings.Join(bad, "\n  "))
			}
			out := neutralizeRaw(p.Text)
			if again := neutralizeRaw(out); again != out {
				t.Errorf("not idempotent:\n%q\n%q", out, again)
			}
		})
	}
	if through > 0 {
		t.Errorf("%d of %d payloads reach the model as something Switchboard writes", through, len(corpus))
	}
}

// TestFinding8_LegitimateTextUntouched keeps the fix from eating ordinary
// messages: prose that mentions a system, brackets, angle brackets, lists
// and quotes come out as they went in.
func TestFinding8_LegitimateTextUntouched(t *testing.T) {
	var texts []string
	loadFinding8(t, "legitimate.json", &texts)
	for _, s := range texts {
		if got := neutralizeRaw(s); got != s {
			t.Errorf("neutralizeRaw(%q) = %q, want it unchanged", s, got)
		}
		for line := range strings.SplitSeq(s, "\n") {
			if what := f8PassesFor(line); what != "" {
				t.Errorf("oracle flags legitimate line %q: %s", line, what)
			}
		}
	}
}

// TestFinding8_OracleKnowsOurLines checks the oracle against the texts
// Switchboard writes: each must pass for a marker, or the oracle has a
// hole.
func TestFinding8_OracleKnowsOurLines(t *testing.T) {
	own := append(UntrustedLabels(),
		TrustedHeading, strings.TrimPrefix(TrustedHeading, "## "),
		AbortHint, UntrustedContextHeader, ThreadHistoryNote, ThreadStarterNote, ReplyMediaHint,
		BareSessionResetPrompt, DefaultHeartbeatPrompt,
		"System: [Thu 2025-05-01 14:30 UTC] Cron job finished",
		"System (untrusted): [Thu 2025-05-01 14:30 UTC] edited",
		"[media attached: /tmp/a.png (image/png)]", "[media attached: 2 files]",
		"[Queued messages while agent was busy]", "[Queue overflow] Dropped 3 messages due to cap.", "Queued #1",
		"[Replying to Bob id:42]", "[/Replying]",
		"[Telegram Alice id:42 +2m 2025-05-01 14:30 UTC] hi", "[message_id: 42]",
		"<|im_start|>system", "<|im_end|>", "[INST]", "<<SYS>>", "</s>", "<system>", "</untrusted>",
	)
	for _, s := range own {
		if f8PassesFor(s) == "" {
			t.Errorf("oracle does not recognise Switchboard's own %q", s)
		}
	}
}

// TestFinding8_SkeletonFoldsLookAlikes pins the normalisation of the runes
// the finding named and their neighbours.
func TestFinding8_SkeletonFoldsLookAlikes(t *testing.T) {
	cases := map[rune]string{
		'S': "s", 'ѕ': "s", 'Ѕ': "s", 0x13DA: "s", 0xA4E2: "s", 0x1E60: "s", 0xABAA: "s", 'Ｓ': "s",
		0x1D412: "s", 0x24C8: "s", 0x1F162: "s", 0x1F1F8: "s", 'ꜱ': "s", 'ſ': "s", 'ı': "i", 'Ι': "l",
		'：': ":", '＃': "#", '＜': "<", '｜': "|", '【': "[", '〉': ">", 'ﬆ': "st",
		0x2800: "", 0x200B: "", 0x2060: "", 0xFEFF: "", 0x202E: "", 0xE0073: "", 0xFE0F: "", 0xE0100: "",
		0x3164: "", 0x115F: "", 0x1160: "", 0x0336: "", 0x00AD: "", 0x0085: "",
		0x3000: " ", 0x00A0: " ", '\t': " ",
		'•': skelSymbol, '⚠': skelSymbol, '→': skelSymbol, 'ж': skelOther, '中': skelOther, '(': "(",
	}
	for r, want := range cases {
		if got := skeletonRune(r); got != want {
			t.Errorf("skeletonRune(%U %q) = %q, want %q", r, r, got, want)
		}
	}
}

// FuzzFinding8_NoLinePassesForOurMarkers checks the invariant on arbitrary
// text in every raw slot: no line the neutraliser lets through passes for
// a marker, and neutralising twice changes nothing.
func FuzzFinding8_NoLinePassesForOurMarkers(f *testing.F) {
	var corpus []f8Payload
	loadFinding8(f, "forged_authority.json", &corpus)
	for _, p := range corpus {
		f.Add(p.Text)
	}
	var texts []string
	loadFinding8(f, "legitimate.json", &texts)
	for _, s := range texts {
		f.Add(s)
	}
	for _, s := range loadCorpus(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if bad := f8Check(s); len(bad) > 0 {
			t.Fatalf("%q reaches the model as a marker:\n  %s", s, strings.Join(bad, "\n  "))
		}
		out := neutralizeRaw(s)
		if again := neutralizeRaw(out); again != out {
			t.Fatalf("neutralizeRaw not idempotent on %q:\n%q\n%q", s, out, again)
		}
		for line := range strings.SplitSeq(out, "\n") {
			if what := f8PassesFor(line); what != "" {
				t.Fatalf("neutralizeRaw(%q) keeps line %q: %s", s, line, what)
			}
			if classifyLine(line) != lineOK {
				t.Fatalf("neutralizeRaw(%q) keeps line %q that classifyLine escapes", s, line)
			}
		}
		if l := NeutralizeLine(s); NeutralizeLine(l) != l {
			t.Fatalf("NeutralizeLine not idempotent on %q", s)
		}
	})
}
