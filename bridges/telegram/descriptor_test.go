package telegram_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/telegram"
)

// otherSection is another bridge's configuration section.
type otherSection struct{ bridges.Common }

func (otherSection) IsEnabled() bool { return true }

var webhook = telegram.WebhookConfig{URL: "https://bot.example.com/telegram", Secret: "s3cret"}

// Long polling holds the bot's one getUpdates connection, so only one
// process may run it; any number may serve a webhook.
func TestDescriptorExclusive(t *testing.T) {
	exclusive := telegram.Descriptor().Exclusive
	for _, tc := range []struct {
		name    string
		section bridges.Section
		want    bool
	}{
		{"long polling", telegram.Config{BotToken: "1:a"}, true},
		{"long polling, as a pointer", &telegram.Config{BotToken: "1:a"}, true},
		{"webhook", telegram.Config{BotToken: "1:a", Webhook: webhook}, false},
		{"webhook, as a pointer", &telegram.Config{BotToken: "1:a", Webhook: webhook}, false},
		{"another bridge's section", otherSection{}, false},
		{"nil pointer", (*telegram.Config)(nil), false},
	} {
		if got := exclusive(tc.section); got != tc.want {
			t.Errorf("%s: Exclusive = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// New reads channels.telegram as a Config or a *Config, and refuses any
// other section naming the channel.
func TestDescriptorNew(t *testing.T) {
	newBridge := telegram.Descriptor().New
	for _, tc := range []struct {
		name    string
		section bridges.Section
		why     string // part of the error; "" when it builds
	}{
		{"value", telegram.Config{BotToken: "1:a"}, ""},
		{"pointer", &telegram.Config{BotToken: "1:a", Webhook: webhook}, ""},
		{"no token", telegram.Config{}, "botToken is required"},
		{"another bridge's section", otherSection{}, "telegram: the configuration section is telegram_test.otherSection, want telegram.Config"},
		{"nil pointer", (*telegram.Config)(nil), "telegram: the configuration section is *telegram.Config"},
	} {
		b, err := newBridge(tc.section, bridges.Env{})
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%s: New = %v", tc.name, err)
		case tc.why == "" && (b.Name() != "telegram" || b.AccountID() != "default"):
			t.Errorf("%s: New built %s/%s", tc.name, b.Name(), b.AccountID())
		case tc.why != "" && (err == nil || !strings.Contains(err.Error(), tc.why)):
			t.Errorf("%s: New = %v, want an error saying %q", tc.name, err, tc.why)
		}
	}
}
