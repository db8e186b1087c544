package gateway

import (
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Issue 26, finding 8: the wrong-token message used OpenClaw's words
// ("paste the token in Control UI settings"). It now says what was wrong
// and where the right token comes from, to each kind of client, without
// either token; the details OpenClaw's clients read are unchanged.
func TestFinding8WrongTokenMessage(t *testing.T) {
	r := newRig(t, rigOptions{})
	wrong := strings.Repeat("ab12", 12)
	for _, tc := range []struct {
		name   string
		client protocol.ClientInfo
		token  string
		want   []string
		detail string
	}{
		{"web chat, wrong token", protocol.ClientInfo{ID: protocol.ClientWebchatUI, Mode: protocol.ModeWebchat, Version: "1", Platform: "web"}, wrong,
			[]string{"wrong gateway token", "paste the token", `"switchboard gateway token"`}, protocol.DetailAuthTokenMismatch},
		{"CLI, wrong token", protocol.ClientInfo{ID: protocol.ClientCLI, Mode: protocol.ModeCLI, Version: "1", Platform: "linux"}, wrong,
			[]string{"wrong gateway token", `"switchboard gateway token"`, "--config"}, protocol.DetailAuthTokenMismatch},
		{"web chat, no token", protocol.ClientInfo{ID: protocol.ClientWebchatUI, Mode: protocol.ModeWebchat, Version: "1", Platform: "web"}, "",
			[]string{"no gateway token", `"switchboard gateway token"`}, protocol.DetailAuthTokenMissing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := r.opts()
			o.Token = tc.token
			o.Client = tc.client
			ce := r.reject(o)
			if ce.Err == nil {
				t.Fatal("no error before the close")
			}
			msg := ce.Err.Message
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q lacks %q", msg, w)
				}
			}
			for _, bad := range []string{"Control UI", "gateway.remote", r.token, wrong} {
				if strings.Contains(msg, bad) || strings.Contains(ce.CloseReason, bad) {
					t.Errorf("message %q or close reason %q contains %q", msg, ce.CloseReason, bad)
				}
			}
			if ce.Err.Code != "INVALID_REQUEST" || client.Detail(ce, "code") != tc.detail || ce.CloseCode != 1008 {
				t.Errorf("error %s, details %v, close %d; want INVALID_REQUEST, %s, 1008", ce.Err.Code, ce.Err.Details, ce.CloseCode, tc.detail)
			}
		})
	}
}
