package bridges_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/telegram"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/core"
)

// registry is the daemon's registry: every bridge this repository ships.
func registry() bridges.Registry {
	return bridges.Registry{telegram.Descriptor(), slack.Descriptor(), discord.Descriptor(), whatsapp.Descriptor(nil)}
}

// goodTargets are targets as users and the model write them, with the
// routes they name and whether the chat is a direct one.
var goodTargets = []struct {
	target string
	want   core.Route
	direct bool
}{
	{"telegram:123456789", core.Route{Channel: "telegram", To: "123456789"}, true},
	{"telegram:-1001234567890:topic:42", core.Route{Channel: "telegram", To: "-1001234567890", ThreadID: "42"}, false},
	{"Telegram#work:55", core.Route{Channel: "telegram", AccountID: "work", To: "55"}, true},
	{" telegram:-100 ", core.Route{Channel: "telegram", To: "-100"}, false},
	{"slack:channel:C0123", core.Route{Channel: "slack", To: "C0123"}, false},
	{"slack:user:U9", core.Route{Channel: "slack", To: "U9"}, true},
	{"slack:D024BE91L", core.Route{Channel: "slack", To: "D024BE91L"}, true},
	{"slack:W012A3CDE", core.Route{Channel: "slack", To: "W012A3CDE"}, true},
	{"discord:channel:987", core.Route{Channel: "discord", To: "987"}, false},
	{"discord:987", core.Route{Channel: "discord", To: "987"}, false},
	// Discord sends to channels: the bridge opens the user's DM itself.
	{"discord:user:42", core.Route{Channel: "discord", To: "user:42"}, true},
	{"whatsapp:+15551234567", core.Route{Channel: "whatsapp", To: "+15551234567"}, true},
	{"whatsapp:120363@g.us", core.Route{Channel: "whatsapp", To: "120363@g.us"}, false},
	{"whatsapp:15551234567@s.whatsapp.net", core.Route{Channel: "whatsapp", To: "15551234567@s.whatsapp.net"}, true},
}

// badTargets are targets the registry refuses, each with a part of the
// error that tells the user what is wrong.
var badTargets = []struct{ target, why string }{
	{"", "is not <channel>:<chat>"},
	{"telegram", "is not <channel>:<chat>"},
	{"telegram:", "is not <channel>:<chat>"},
	{":123", "is not <channel>:<chat>"},
	{"telegram:1:topic:", "the topic id is empty"},
	{"slack:channel:", "is not a usable chat id"},
	{"telegram:a b", "is not a usable chat id"},
	{"discord:user:4 2", "is not a usable chat id"},
	{"telegram:1\u00a02", "is not a usable chat id"}, // a no-break space
	{"slack:user:U\v9", "is not a usable chat id"},
	{"pager:1", `no bridge provides channel "pager" (known: telegram, slack, discord, whatsapp)`},
	{"telgram:1", `no bridge provides channel "telgram" (did you mean "telegram"? known: telegram, slack, discord, whatsapp)`},
	{"whatsapp:not-a-number", "neither a phone number"},
	{"whatsapp:123@example.com", "unknown server"},
}

func TestRegistryParseTarget(t *testing.T) {
	r := registry()
	for _, tc := range goodTargets {
		got, err := r.ParseTarget(tc.target)
		if err != nil || got != tc.want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", tc.target, got, err, tc.want)
		}
	}
	for _, tc := range badTargets {
		got, err := r.ParseTarget(tc.target)
		if err == nil {
			t.Errorf("ParseTarget(%q) = %+v, want an error", tc.target, got)
			continue
		}
		if !strings.Contains(err.Error(), tc.why) {
			t.Errorf("ParseTarget(%q) = %v, want it to say %q", tc.target, err, tc.why)
		}
	}
	// A malformed target shows how targets are written.
	if _, err := r.ParseTarget("telegram"); err == nil || !strings.Contains(err.Error(), "for example telegram:<chatId>") {
		t.Errorf("ParseTarget(%q) = %v, want examples", "telegram", err)
	}
	// A chat its platform refuses is shown with that platform's forms.
	if _, err := r.ParseTarget("telegram:1:topic:"); err == nil || !strings.Contains(err.Error(), "Telegram chat") || !strings.Contains(err.Error(), "telegram:<chatId>:topic:<topicId>") {
		t.Errorf("ParseTarget(%q) = %v, want the label and Telegram's forms", "telegram:1:topic:", err)
	}
}

// A registry knows only the channels it holds.
func TestRegistryEmpty(t *testing.T) {
	var r bridges.Registry
	if _, err := r.ParseTarget("telegram"); err == nil || !strings.Contains(err.Error(), "no channel is known") {
		t.Errorf("empty registry: ParseTarget = %v", err)
	}
	if _, err := r.ParseTarget("telegram:1"); err == nil || !strings.Contains(err.Error(), "known: none") {
		t.Errorf("empty registry: ParseTarget = %v", err)
	}
	if r.IsDirect(core.Route{Channel: "telegram", To: "1"}) {
		t.Error("empty registry: a direct chat")
	}
}

func TestRegistryIsDirect(t *testing.T) {
	r := registry()
	for _, tc := range goodTargets {
		route, err := r.ParseTarget(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.IsDirect(route); got != tc.direct {
			t.Errorf("IsDirect(%q) = %v, want %v", tc.target, got, tc.direct)
		}
	}
	for _, tc := range []struct {
		name  string
		r     bridges.Registry
		route core.Route
	}{
		{"unknown channel", r, core.Route{Channel: "pager", To: "1"}},
		{"telegram chat that is no number", r, core.Route{Channel: "telegram", To: "@channelname"}},
		{"telegram zero", r, core.Route{Channel: "telegram", To: "0"}},
		{"no IsDirect", bridges.Registry{{Channel: "matrix", New: newNothing}}, core.Route{Channel: "matrix", To: "@a:b"}},
	} {
		if tc.r.IsDirect(tc.route) {
			t.Errorf("%s: %+v counts as direct", tc.name, tc.route)
		}
	}
}

func TestRegistryResolve(t *testing.T) {
	r := append(registry(), bridges.Descriptor{Channel: "matrix", New: newNothing})
	for _, tc := range []struct {
		channel, account, chat string
		want                   core.Route
		why                    string // part of the error; "" when it resolves
	}{
		{"Slack", "work", " channel:C1 ", core.Route{Channel: "slack", AccountID: "work", To: "C1"}, ""},
		{"telegram", "", "-100:topic:7", core.Route{Channel: "telegram", To: "-100", ThreadID: "7"}, ""},
		// Without ParseChat the chat is taken as written.
		{"matrix", "", "!room:example.org", core.Route{Channel: "matrix", To: "!room:example.org"}, ""},
		{"matrix", "", "a room", core.Route{}, "not a usable chat id"},
		{"matrix", "", "  ", core.Route{}, "not a usable chat id"},
		{"pager", "", "1", core.Route{}, "known: telegram, slack, discord, whatsapp, matrix"},
		{"whatsapp", "", "12", core.Route{}, "WhatsApp chat"},
	} {
		got, err := r.Resolve(tc.channel, tc.account, tc.chat)
		switch {
		case tc.why == "" && (err != nil || got != tc.want):
			t.Errorf("Resolve(%q, %q, %q) = %+v, %v; want %+v", tc.channel, tc.account, tc.chat, got, err, tc.want)
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("Resolve(%q, %q, %q) = %+v, %v; want an error saying %q", tc.channel, tc.account, tc.chat, got, err, tc.why)
		}
	}
}

func TestRegistryLookupAndLabels(t *testing.T) {
	r := registry()
	if got, want := strings.Join(r.Channels(), ","), "telegram,slack,discord,whatsapp"; got != want {
		t.Errorf("Channels = %s, want %s", got, want)
	}
	if d, ok := r.Lookup("WhatsApp"); !ok || d.Channel != "whatsapp" || !d.Linkable {
		t.Errorf("Lookup(WhatsApp) = %+v, %v; want the linkable whatsapp bridge", d.Channel, ok)
	}
	if _, ok := r.Lookup("pager"); ok {
		t.Error("Lookup(pager) found a bridge")
	}
	for channel, want := range map[string]string{"telegram": "Telegram", "slack": "Slack", "discord": "Discord", "whatsapp": "WhatsApp", "pager": "pager"} {
		if got := r.Label(channel); got != want {
			t.Errorf("Label(%s) = %q, want %q", channel, got, want)
		}
	}
	if got := (bridges.Descriptor{Channel: "matrix"}).DisplayName(); got != "matrix" {
		t.Errorf("DisplayName without a label = %q, want the channel", got)
	}
	for _, d := range r {
		if d.Linkable != (d.Channel == "whatsapp") {
			t.Errorf("%s: Linkable = %v", d.Channel, d.Linkable)
		}
		if d.Exclusive == nil {
			t.Errorf("%s: no Exclusive, but every shipped bridge holds a connection of its own in some mode", d.Channel)
		}
	}
	// A gateway session and a linked device are exclusive whatever the
	// configuration (Telegram's and Slack's depend on it: their own tests).
	for _, channel := range []string{"discord", "whatsapp"} {
		if d, _ := r.Lookup(channel); d.Exclusive == nil || !d.Exclusive(nil) {
			t.Errorf("%s is not exclusive", channel)
		}
	}
}

// TargetHelp lists every channel's forms in registry order, skipping
// channels that declare none.
func TestRegistryTargetHelp(t *testing.T) {
	r := append(registry(), bridges.Descriptor{Channel: "matrix", New: newNothing})
	help := r.TargetHelp()
	parts := strings.Split(help, "; ")
	if len(parts) != 4 {
		t.Fatalf("TargetHelp = %q, want 4 channels' forms", help)
	}
	for i, channel := range []string{"telegram", "slack", "discord", "whatsapp"} {
		d, _ := r.Lookup(channel)
		if parts[i] != d.TargetHelp || !strings.HasPrefix(parts[i], channel+":") {
			t.Errorf("TargetHelp part %d = %q, want %s's %q", i, parts[i], channel, d.TargetHelp)
		}
	}
	if got := (bridges.Registry{}).TargetHelp(); got != "" {
		t.Errorf("empty registry's TargetHelp = %q", got)
	}
}

func TestRegistryValidate(t *testing.T) {
	if err := registry().Validate(); err != nil {
		t.Fatalf("the shipped registry: %v", err)
	}
	d := func(channel string) bridges.Descriptor { return bridges.Descriptor{Channel: channel, New: newNothing} }
	for _, tc := range []struct {
		name string
		r    bridges.Registry
		why  string
	}{
		{"empty channel", bridges.Registry{d("")}, `channel name "" must be lower case`},
		{"upper case", bridges.Registry{d("Telegram")}, `channel name "Telegram" must be lower case`},
		{"colon", bridges.Registry{d("a:b")}, "without ':'"},
		{"account separator", bridges.Registry{d("a#b")}, "without ':', '#'"},
		{"space", bridges.Registry{d("a b")}, "or spaces"},
		{"duplicate", bridges.Registry{d("telegram"), d("slack"), d("telegram")}, `bridge 2: channel "telegram" is registered twice`},
		{"no constructor", bridges.Registry{{Channel: "matrix"}}, `bridge "matrix" has no constructor`},
	} {
		err := tc.r.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s: Validate = %v, want an error saying %q", tc.name, err, tc.why)
		}
	}
	// Every problem is reported, not only the first.
	err := bridges.Registry{d("X"), {Channel: "y"}}.Validate()
	if err == nil || !strings.Contains(err.Error(), `"X"`) || !strings.Contains(err.Error(), `"y" has no constructor`) {
		t.Errorf("two problems: Validate = %v, want both", err)
	}
}

// A route ParseTarget returns always names a channel the registry holds
// and a chat without whitespace; no input makes it panic.
func FuzzRegistryParseTarget(f *testing.F) {
	for _, tc := range goodTargets {
		f.Add(tc.target)
	}
	for _, tc := range badTargets {
		f.Add(tc.target)
	}
	f.Add("telegram#:1")
	f.Add("slack:user:")
	f.Add("whatsapp:+1 (555) 123-4567")
	f.Add("discord:channel:\t")
	r := registry()
	f.Fuzz(func(t *testing.T, s string) {
		route, err := r.ParseTarget(s)
		if err != nil {
			return
		}
		if _, ok := r.Lookup(string(route.Channel)); !ok || route.Channel != core.ChannelName(strings.ToLower(string(route.Channel))) {
			t.Fatalf("ParseTarget(%q) = %+v: not a channel of the registry", s, route)
		}
		if route.To == "" || strings.ContainsFunc(string(route.To), unicode.IsSpace) {
			t.Fatalf("ParseTarget(%q) = %+v: no usable chat", s, route)
		}
	})
}

// newNothing is a constructor for descriptors that are never built.
func newNothing(bridges.Section, bridges.Env) (bridges.Bridge, error) { return nil, nil }
