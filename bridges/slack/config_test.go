package slack

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

func TestConfigReplyModesByChatType(t *testing.T) {
	c := Config{Common: bridges.Common{ReplyToMode: bridges.ReplyFirst}, ReplyToModeByChatType: map[string]bridges.ReplyToMode{"direct": bridges.ReplyAll}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	o := c.RouteOptions()
	if o.Mode != bridges.ReplyFirst || o.ByChatType[core.ChatDirect] != bridges.ReplyAll || !o.OffIgnoresTags {
		t.Errorf("route options = %+v", o)
	}
	c.ReplyToModeByChatType["dm"] = bridges.ReplyAll
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), `"direct", "group" or "channel"`) {
		t.Errorf("unknown chat type accepted: %v", err)
	}
}
