package slack_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/slack"
)

// otherSection is another bridge's configuration section.
type otherSection struct{ bridges.Common }

func (otherSection) IsEnabled() bool { return true }

// A Socket Mode connection is the app's own, so only one process may run
// it; any number may serve the Events API over HTTP.
func TestDescriptorExclusive(t *testing.T) {
	exclusive := slack.Descriptor().Exclusive
	for _, tc := range []struct {
		name    string
		section bridges.Section
		want    bool
	}{
		{"socket mode by default", slack.Config{}, true},
		{"socket mode", slack.Config{Mode: "socket"}, true},
		{"socket mode, as a pointer", &slack.Config{Mode: "socket"}, true},
		{"http", slack.Config{Mode: "http"}, false},
		{"http, as a pointer", &slack.Config{Mode: "http"}, false},
		{"another bridge's section", otherSection{}, false},
		{"nil pointer", (*slack.Config)(nil), false},
	} {
		if got := exclusive(tc.section); got != tc.want {
			t.Errorf("%s: Exclusive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// New reads channels.slack as a Config or a *Config, and refuses any other
// section naming the channel.
func TestDescriptorNew(t *testing.T) {
	newBridge := slack.Descriptor().New
	for _, tc := range []struct {
		name    string
		section bridges.Section
		why     string // part of the error; "" when it builds
	}{
		{"socket mode", slack.Config{BotToken: "xoxb-1", AppToken: "xapp-1"}, ""},
		{"http, as a pointer", &slack.Config{BotToken: "xoxb-1", Mode: "http", SigningSecret: "s"}, ""},
		{"no app token", slack.Config{BotToken: "xoxb-1"}, "appToken"},
		{"another bridge's section", otherSection{}, "slack: the configuration section is slack_test.otherSection, want slack.Config"},
		{"nil pointer", (*slack.Config)(nil), "slack: the configuration section is *slack.Config"},
	} {
		b, err := newBridge(tc.section, bridges.Env{})
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%s: New = %v", tc.name, err)
		case tc.why == "" && (b.Name() != "slack" || b.AccountID() != "default"):
			t.Errorf("%s: New built %s/%s", tc.name, b.Name(), b.AccountID())
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%s: New = %v, want an error saying %q", tc.name, err, tc.why)
		}
	}
}
