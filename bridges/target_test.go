package bridges

import (
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestParseTarget(t *testing.T) {
	for in, want := range map[string]core.Route{
		"telegram:123456789":               {Channel: "telegram", To: "123456789"},
		"telegram:-1001234567890:topic:42": {Channel: "telegram", To: "-1001234567890", ThreadID: "42"},
		"Telegram#work:55":                 {Channel: "telegram", AccountID: "work", To: "55"},
		"slack:channel:C0123":              {Channel: "slack", To: "C0123"},
		"slack:user:U9":                    {Channel: "slack", To: "U9"},
		"discord:channel:987":              {Channel: "discord", To: "987"},
		"discord:user:42":                  {Channel: "discord", To: "user:42"},
		"whatsapp:+15551234567":            {Channel: "whatsapp", To: "+15551234567"},
		"whatsapp:120363@g.us":             {Channel: "whatsapp", To: "120363@g.us"},
	} {
		got, err := ParseTarget(in)
		if err != nil || got != want {
			t.Errorf("ParseTarget(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "telegram", "telegram:", ":123", "telegram:1:topic:", "slack:channel:", "telegram:a b"} {
		if _, err := ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q) accepted", bad)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	f.Add("telegram:-100:topic:1")
	f.Add("slack:user:U1")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseTarget(s)
		if err == nil && (r.Channel == "" || r.To == "") {
			t.Fatalf("ParseTarget(%q) = %+v without a channel or chat", s, r)
		}
	})
}
