package whatsapp_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
)

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"+15551234567", "15551234567@s.whatsapp.net", ""},
		{"15551234567", "15551234567@s.whatsapp.net", ""},
		{"+1 (555) 123-4567", "15551234567@s.whatsapp.net", ""},
		{"120363403215116621@g.us", "120363403215116621@g.us", ""},
		{"88887776666@lid", "88887776666@lid", ""},
		{"", "", "international form"},
		{"+12", "", "international form"},
		{"0555123456", "", "international form"},
		{"+1555123456789012", "", "international form"},
		{"call me", "", "international form"},
		{"a@b@c", "", "not a JID"},
	} {
		jid, err := whatsapp.ParseTarget(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseTarget(%q) = %v, %v; want an error mentioning %q", tc.in, jid, err, tc.err)
			}
		case err != nil || jid.String() != tc.want:
			t.Errorf("ParseTarget(%q) = %v, %v; want %s", tc.in, jid, err, tc.want)
		}
	}
}

func TestConfigNormalizesPhoneNumbers(t *testing.T) {
	c := whatsapp.Config{Common: bridges.Common{Access: bridges.Access{
		AllowFrom:      []string{"15557654321", "+1 555 333 4444", "*", "whatsapp:+15550000000"},
		GroupAllowFrom: []string{"1-555-765-4321"},
		Groups:         map[string]bridges.GroupRule{"120363403215116621@g.us": {AllowFrom: []string{"15553334444"}}},
	}}}
	a := c.Policy()
	if want := []string{"+15557654321", "+15553334444", "*", "+15550000000"}; !slices.Equal(a.AllowFrom, want) {
		t.Errorf("allowFrom %q, want %q", a.AllowFrom, want)
	}
	if !slices.Equal(a.GroupAllowFrom, []string{"+15557654321"}) {
		t.Errorf("groupAllowFrom %q", a.GroupAllowFrom)
	}
	if got := a.Groups["120363403215116621@g.us"].AllowFrom; !slices.Equal(got, []string{"+15553334444"}) {
		t.Errorf("group allowFrom %q", got)
	}
	if c.Groups["120363403215116621@g.us"].AllowFrom[0] != "15553334444" {
		t.Error("Policy changed the configuration it read")
	}
	if err := (whatsapp.Config{Common: bridges.Common{Access: bridges.Access{DMPolicy: bridges.DMAllowlist}}}).Validate(); err == nil {
		t.Error("allowlist without allowFrom validated")
	}
}
