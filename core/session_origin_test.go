package core_test

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// OriginOf names a session's chat from a person's message: the peer of a
// direct chat, the group's names and thread, and the first message's words
// kept as the title; commands name nothing, and platform text is bounded.
func TestOriginOf(t *testing.T) {
	dm := &core.Inbound{Route: core.Route{Channel: "telegram"}, ChatType: core.ChatDirect, Sender: core.Sender{Name: "Ann"}, Body: "  hi   there "}
	o := core.OriginOf(dm, nil)
	if *o != (core.SessionOrigin{Kind: core.OriginDirect, Channel: "telegram", Peer: "Ann", Title: "hi there"}) {
		t.Errorf("direct origin = %+v", o)
	}
	later := core.OriginOf(&core.Inbound{Route: dm.Route, ChatType: core.ChatDirect, Sender: core.Sender{Name: "Ann L."}, Body: "second"}, o)
	if later.Title != "hi there" || later.Peer != "Ann L." {
		t.Errorf("a later message: %+v; want the first title kept and the name updated", later)
	}
	group := &core.Inbound{Route: core.Route{Channel: "slack"}, ChatType: core.ChatChannel, ThreadLabel: "Deploy",
		Group: &core.GroupInfo{Channel: "#ops", Space: strings.Repeat("A", 200)}, Sender: core.Sender{Name: "Bo"}, Body: "/new"}
	o = core.OriginOf(group, nil)
	if o.Kind != core.OriginChannel || o.Room != "#ops" || o.Thread != "Deploy" || o.Peer != "" || o.Title != "" || len([]rune(o.Space)) != 80 {
		t.Errorf("channel origin = %+v", o)
	}
	web := core.OriginOf(&core.Inbound{Route: core.Route{Channel: core.WebchatChannel}, Body: "plan"}, nil)
	if web.Kind != core.OriginWebchat || web.Title != "plan" {
		t.Errorf("web chat origin = %+v", web)
	}
	if got := core.OriginOf(&core.Inbound{Kind: core.InboundHeartbeat}, web); got != web {
		t.Errorf("a heartbeat changed the origin to %+v", got)
	}
	if got := core.OriginOf(&core.Inbound{Kind: core.InboundCron}, nil); got.Kind != core.OriginCron {
		t.Errorf("cron origin = %+v", got)
	}
}
