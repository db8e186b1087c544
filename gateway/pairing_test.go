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

// OpenClaw 2026.9.6 renamed DM pairing to channels.pairing.list|approve|
// dismiss with requests {requestId, senderId, …, expiresAt}; its Control
// UI's channels page showed "unknown method: channels.pairing.list". The
// request id is the pairing code.
func TestChannelsPairingMethodsInOpenClawsShape(t *testing.T) {
	r := newRig(t, rigOptions{})
	ctx := t.Context()
	now := r.gw.now().UnixMilli()
	for sender, code := range map[string]string{"42": "ABCD2345", "43": "EFGH2345"} {
		if _, created, err := r.st.CreateChannelPairingCode(ctx, store.ChannelPairingCode{
			Channel: "telegram", AccountID: "default", SenderID: sender, SenderName: "User " + sender, CreatedAt: now,
		}, 0, 3, func() string { return code }); err != nil || !created {
			t.Fatalf("create code: %v %v", created, err)
		}
	}
	c := r.dial(r.opts(protocol.ScopePairing))
	list := call[map[string]any](t, c, "channels.pairing.list", map[string]any{"channel": "telegram", "accountId": "default"})
	reqs, _ := list["requests"].([]any)
	if len(reqs) != 2 || list["limits"].(map[string]any)["ttlMs"] != float64(3600000) || list["commandOwnerConfigured"] != false {
		t.Fatalf("channels.pairing.list = %v", list)
	}
	first := reqs[0].(map[string]any)
	if first["requestId"] == "" || first["senderLabel"] == "" || first["expiresAt"] == "" || first["channelLabel"] != "telegram" {
		t.Errorf("a request = %v", first)
	}
	if other := call[map[string]any](t, c, "channels.pairing.list", map[string]any{"accountId": "other"}); len(other["requests"].([]any)) != 0 {
		t.Errorf("requests of another account: %v", other)
	}

	res := call[map[string]any](t, c, "channels.pairing.approve", map[string]any{
		"channel": "telegram", "accountId": "default", "requestId": "abcd2345", "notify": true, "bootstrapCommandOwner": true,
	})
	if res["senderId"] != "42" || res["requestId"] != "ABCD2345" || res["notification"] != "unsupported" || res["commandOwnerBootstrap"] != "unavailable" {
		t.Fatalf("channels.pairing.approve = %v", res)
	}
	if ok, _ := r.st.ChannelSenderAllowed(ctx, "telegram", "default", "42"); !ok {
		t.Error("the approved sender is not allowed in the store")
	}
	if res := call[map[string]any](t, c, "channels.pairing.dismiss", map[string]any{"channel": "telegram", "accountId": "default", "requestId": "EFGH2345"}); res["senderId"] != "43" {
		t.Fatalf("channels.pairing.dismiss = %v", res)
	}
	if ok, _ := r.st.ChannelSenderAllowed(ctx, "telegram", "default", "43"); ok {
		t.Error("the dismissed sender is allowed")
	}
	for _, tc := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"channels.pairing.approve", map[string]any{"channel": "telegram", "accountId": "default", "requestId": "EFGH2345"}, "unknown pairing request EFGH2345"},
		{"channels.pairing.approve", map[string]any{"channel": "telegram", "requestId": "X"}, "channel, accountId and requestId are required"},
		{"channels.pairing.dismiss", map[string]any{"channel": "telegram", "accountId": "default", "requestId": "X", "notify": true}, "notify and bootstrapCommandOwner are channels.pairing.approve's"},
		{"channels.pairing.list", map[string]any{"channel": ""}, "channel, when given, must not be empty"},
	} {
		if e := callErr(t, c, tc.method, tc.params); e.Code != protocol.CodeInvalidRequest || !strings.Contains(e.Message, tc.want) {
			t.Errorf("%s %v: %s %q, want INVALID_REQUEST containing %q", tc.method, tc.params, e.Code, e.Message, tc.want)
		}
	}
}
