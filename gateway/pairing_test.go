package gateway

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/store"
)

func TestPairingMethodsListApproveReject(t *testing.T) {
	r := newRig(t, rigOptions{})
	ctx := t.Context()
	now := r.gw.now().UnixMilli()
	mk := func(sender, code string) {
		t.Helper()
		if _, created, err := r.st.CreateChannelPairingCode(ctx, store.ChannelPairingCode{
			Channel: "telegram", AccountID: "default", SenderID: sender, SenderName: "User " + sender, CreatedAt: now,
		}, 0, 3, func() string { return code }); err != nil || !created {
			t.Fatalf("create code: %v %v", created, err)
		}
	}
	mk("42", "ABCD2345")
	mk("43", "EFGH2345")

	c := r.dial(r.opts(protocol.ScopePairing))
	list := call[map[string][]map[string]any](t, c, "pairing.list", map[string]any{"channel": "telegram"})
	if len(list["pending"]) != 2 || len(list["approved"]) != 0 {
		t.Fatalf("pairing.list = %v", list)
	}
	if e := callErr(t, c, "pairing.approve", map[string]any{"channel": "telegram", "code": "ZZZZ9999"}); !strings.Contains(e.Message, "unknown pairing code") {
		t.Errorf("approve unknown code: %+v", e)
	}
	res := call[map[string]any](t, c, "pairing.approve", map[string]any{"channel": "Telegram", "code": "abcd2345"})
	if res["approved"].(map[string]any)["senderId"] != "42" {
		t.Fatalf("pairing.approve = %v", res)
	}
	if ok, _ := r.st.ChannelSenderAllowed(ctx, "telegram", "default", "42"); !ok {
		t.Error("the approved sender is not allowed in the store")
	}
	call[map[string]any](t, c, "pairing.reject", map[string]any{"channel": "telegram", "code": "EFGH2345"})
	list = call[map[string][]map[string]any](t, c, "pairing.list", nil)
	if len(list["pending"]) != 0 || len(list["approved"]) != 1 {
		t.Fatalf("after decisions pairing.list = %v", list)
	}
	if e := callErr(t, c, "pairing.approve", map[string]any{"channel": "telegram"}); e.Code != protocol.CodeInvalidRequest {
		t.Errorf("approve without a code: %+v", e)
	}

	// Reading is not enough to approve.
	reader := r.dial(r.opts(protocol.ScopeRead))
	if e := callErr(t, reader, "pairing.approve", map[string]any{"channel": "telegram", "code": "EFGH2345"}); !strings.Contains(e.Message, protocol.ScopePairing) {
		t.Errorf("approve with read scope only: %+v", e)
	}
}
