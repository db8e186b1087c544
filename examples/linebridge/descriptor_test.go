package linebridge_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/examples/linebridge"
)

func TestTargets(t *testing.T) {
	reg := bridges.Registry{linebridge.Descriptor()}
	if err := reg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target string
		want   string // Route.To, or "" for an error
	}{
		{"line:5f2c91aa-1", "5f2c91aa-1"},
		{"line:0-42", "0-42"},
		{"LINE:abc-7", "abc-7"},
		{"line:ada", ""},
		{"line:5f2c91aa-", ""},
		{"line:-1", ""},
		{"line:XYZ-1", ""},
	} {
		route, err := reg.ParseTarget(tc.target)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseTarget(%q) = %+v, want an error", tc.target, route)
		case tc.want == "":
			if !strings.Contains(err.Error(), "line:<chat>") {
				t.Errorf("ParseTarget(%q) error %q does not say how targets are written", tc.target, err)
			}
		case err != nil || route != (core.Route{Channel: "line", To: core.ChatID(tc.want)}):
			t.Errorf("ParseTarget(%q) = %+v, %v; want To %q", tc.target, route, err, tc.want)
		case !reg.IsDirect(route):
			t.Errorf("IsDirect(%+v) = false; every chat is direct", route)
		}
	}
}

func TestConfig(t *testing.T) {
	open := bridges.Access{DMPolicy: bridges.DMOpen, AllowFrom: []string{"*"}}
	for _, tc := range []struct {
		name string
		cfg  linebridge.Config
		bad  string // a word of the error, "" for valid
	}{
		{"defaults", linebridge.Config{Enabled: true}, ""},
		{"open", linebridge.Config{Enabled: true, Listen: ":0", Common: bridges.Common{Access: open}}, ""},
		{"listen", linebridge.Config{Listen: "7070"}, "listen"},
		{"open without *", linebridge.Config{Common: bridges.Common{Access: bridges.Access{DMPolicy: bridges.DMOpen}}}, "dmPolicy"},
		{"media", linebridge.Config{Common: bridges.Common{MediaMaxMB: 1}}, "mediaMaxMb"},
	} {
		err := tc.cfg.Validate()
		if (err == nil) != (tc.bad == "") || err != nil && !strings.Contains(err.Error(), tc.bad) {
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.name, err, tc.bad)
		}
		// Descriptor.New refuses what Validate refuses, and builds the rest.
		b, err := linebridge.Descriptor().New(tc.cfg, bridges.Env{})
		if (err == nil) != (tc.bad == "") {
			t.Errorf("%s: New() = %v, %v", tc.name, b, err)
		}
		if err == nil && (b.Name() != "line" || b.AccountID() != "default" || b.Status().State != bridges.StateStarting) {
			t.Errorf("%s: built %s/%s in %s", tc.name, b.Name(), b.AccountID(), b.Status().State)
		}
	}
	if _, err := linebridge.Descriptor().New(otherSection{}, bridges.Env{}); err == nil {
		t.Error("New took another bridge's section")
	}
}

// otherSection is a section of some other bridge.
type otherSection struct{ bridges.Common }

func (otherSection) IsEnabled() bool { return true }
