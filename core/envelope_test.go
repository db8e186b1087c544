package core_test

import (
	"encoding/json"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

func TestToolEnvelopeString(t *testing.T) {
	for _, tc := range []struct {
		e    core.ToolEnvelope
		want string
	}{
		{core.ErrorEnvelope("exec", "command required"), `{"status":"error","tool":"exec","error":"command required"}`},
		{core.BlockedEnvelope("exec", "Tool blocked by policy: safe-bin mode"), `{"status":"blocked","tool":"exec","reason":"Tool blocked by policy: safe-bin mode"}`},
		{core.PendingEnvelope("custom_tool", "Tool execution delegated to client"), `{"status":"pending","tool":"custom_tool","message":"Tool execution delegated to client"}`},
		// No HTML escaping: the model reads the text, not a browser.
		{core.ErrorEnvelope("read", `path "<a&b>" not found`), `{"status":"error","tool":"read","error":"path \"<a&b>\" not found"}`},
		{core.ToolEnvelope{Status: "error"}, `{"status":"error"}`},
		{core.ToolEnvelope{}, `{"status":""}`},
	} {
		if got := tc.e.String(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
		// String and encoding/json agree on the value.
		if diff := jsonDiff([]byte(tc.e.String()), mustMarshal(t, tc.e)); diff != "" {
			t.Errorf("String and json.Marshal differ:\n%s", diff)
		}
	}
}

func TestReplyPayloadJSON(t *testing.T) {
	if got := string(mustMarshal(t, core.ReplyPayload{})); got != `{}` {
		t.Errorf("zero payload encodes as %s", got)
	}
	in := `{"text":"Done.","mediaUrl":"https://example.com/a.png","mediaUrls":["https://example.com/b.png"],` +
		`"interactive":{"buttons":[{"label":"OK","value":"ok"}]},"btw":{"question":"Want the logs too?"},` +
		`"replyToId":"42","replyToTag":true,"replyToCurrent":true,"audioAsVoice":true,"isError":true,` +
		`"isReasoning":true,"isCompactionNotice":true,"channelData":{"telegram":{"parse_mode":"HTML"}}}`
	var p core.ReplyPayload
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.Btw == nil || p.Btw.Question != "Want the logs too?" || p.ReplyToID != "42" || len(p.ChannelData) != 1 {
		t.Errorf("decoded %+v", p)
	}
	if got := string(mustMarshal(t, p)); got != in {
		t.Errorf("re-encoded as\n%s\nwant\n%s", got, in)
	}
}
