package protocol

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateCloseReason(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty becomes invalid handshake", "", "invalid handshake"},
		{"short kept", "protocol mismatch", "protocol mismatch"},
		{"exactly 120 bytes kept", strings.Repeat("a", 120), strings.Repeat("a", 120)},
		{"ASCII cut at 120", strings.Repeat("a", 200), strings.Repeat("a", 120)},
		// 119 ASCII bytes then a 3-byte rune that would end at byte 122.
		{"multibyte rune not split", strings.Repeat("a", 119) + "€€", strings.Repeat("a", 119)},
		{"multibyte runes fill exactly", strings.Repeat("€", 41), strings.Repeat("€", 40)},
	}
	for _, tt := range tests {
		got := TruncateCloseReason(tt.in)
		if got != tt.want {
			t.Errorf("%s: got %q (%d bytes)", tt.name, got, len(got))
		}
		if len(got) > 120 || !utf8.ValidString(got) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v", tt.name, len(got), utf8.ValidString(got))
		}
	}
}

func TestErrorConstructors(t *testing.T) {
	tests := []struct {
		name string
		e    *ErrorShape
		want string
	}{
		{"invalid request", InvalidRequest("bad", map[string]int{"n": 1}), `{"code":"INVALID_REQUEST","message":"bad","details":{"n":1}}`},
		{"unavailable", Unavailable("busy", 250), `{"code":"UNAVAILABLE","message":"busy","retryable":true,"retryAfterMs":250}`},
		{"unavailable without delay", Unavailable("busy", 0), `{"code":"UNAVAILABLE","message":"busy","retryable":true}`},
		{"startup", StartupUnavailable("chat.send"), `{"code":"UNAVAILABLE","message":"chat.send unavailable during gateway startup","retryable":true,"retryAfterMs":500}`},
		{"unknown method", UnknownMethod("nope"), `{"code":"INVALID_REQUEST","message":"unknown method: nope"}`},
		{"protocol mismatch", ProtocolMismatch(), `{"code":"INVALID_REQUEST","message":"protocol mismatch","details":{"expectedProtocol":4,"minProtocol":3,"maxProtocol":4}}`},
		{"device identity required", DeviceIdentityRequired(), `{"code":"NOT_PAIRED","message":"device identity required","details":{"code":"DEVICE_IDENTITY_REQUIRED"}}`},
		{"pairing required", PairingRequired("req-1", PairingReasonNotPaired), `{"code":"NOT_PAIRED","message":"pairing required","details":{"code":"PAIRING_REQUIRED","reason":"not-paired","requestId":"req-1"}}`},
		{"pairing required bare", PairingRequired("", ""), `{"code":"NOT_PAIRED","message":"pairing required","details":{"code":"PAIRING_REQUIRED"}}`},
		{"missing scope v3", MissingScope(ScopeRead, ProtocolV3), `{"code":"INVALID_REQUEST","message":"missing scope: operator.read"}`},
		{"unauthorized role", UnauthorizedRole("node"), `{"code":"INVALID_REQUEST","message":"unauthorized role: node"}`},
		{"plain", NewError(CodeAgentTimeout, "timed out"), `{"code":"AGENT_TIMEOUT","message":"timed out"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%s\ngot  %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestErrorShapeError(t *testing.T) {
	if got := Unavailable("busy", 5).Error(); got != "UNAVAILABLE: busy (retry after 5ms)" {
		t.Errorf("got %q", got)
	}
	if got := InvalidRequest("bad", nil).Error(); got != "INVALID_REQUEST: bad" {
		t.Errorf("got %q", got)
	}
	var nilErr *ErrorShape
	if nilErr.Error() != "<nil>" {
		t.Error("nil ErrorShape")
	}
}

func TestCloseCodes(t *testing.T) {
	codes := map[int]int{CloseNormal: 1000, CloseProtocolError: 1002, ClosePolicyViolation: 1008,
		CloseMessageTooBig: 1009, CloseTickTimeout: 4000, CloseAuthChanged: 4001}
	for got, want := range codes {
		if got != want {
			t.Errorf("close code %d, want %d", got, want)
		}
	}
	if MaxPreauthPayloadBytes != 65536 || MaxPayloadBytes != 26214400 || MaxBufferedBytes != 52428800 || TickIntervalMs != 30000 {
		t.Error("limits differ from openclaw-facts §1.2")
	}
}
