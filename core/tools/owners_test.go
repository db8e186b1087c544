package tools_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
)

func TestOwners(t *testing.T) {
	o, err := tools.NewOwners([]string{"telegram:111", "whatsapp:+15550001", "Slack:U1"})
	if err != nil {
		t.Fatal(err)
	}
	user := func(ch, id, e164 string) core.Inbound {
		return core.Inbound{Route: core.Route{Channel: core.ChannelName(ch), To: "c"}, Sender: core.Sender{ID: id, E164: e164}}
	}
	for _, tc := range []struct {
		name string
		in   core.Inbound
		want bool
	}{
		{"listed telegram id", user("telegram", "111", ""), true},
		{"same id other channel", user("discord", "111", ""), false},
		{"unlisted", user("telegram", "222", ""), false},
		{"whatsapp by number", user("whatsapp", "1555@s.whatsapp.net", "+15550001"), true},
		{"channel case", user("slack", "U1", ""), true},
		{"heartbeat", core.Inbound{Kind: core.InboundHeartbeat}, true},
		{"cron", core.Inbound{Kind: core.InboundCron}, true},
		{"queue summary", core.Inbound{Kind: core.InboundSystem}, false},
		{"gateway client", core.Inbound{Surface: "webchat", Route: core.Route{Channel: "telegram"}}, true},
		{"username is not an id", core.Inbound{Route: core.Route{Channel: "telegram"}, Sender: core.Sender{Username: "111"}}, false},
	} {
		if got := o.IsOwner(tc.in); got != tc.want {
			t.Errorf("%s: IsOwner = %v, want %v", tc.name, got, tc.want)
		}
	}
	var none *tools.Owners
	if none.IsOwner(user("telegram", "111", "")) {
		t.Error("a nil owner list made a sender the owner")
	}
	all, _ := tools.NewOwners([]string{"*"})
	if !all.IsOwner(user("discord", "9", "")) {
		t.Error(`"*" did not make every sender an owner`)
	}
	if _, err := tools.NewOwners([]string{"123"}); err == nil || !strings.Contains(err.Error(), `"123" is not <channel>:<sender id>`) {
		t.Errorf("bad entry: err = %v", err)
	}
}
