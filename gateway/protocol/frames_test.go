package protocol

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeRequest(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want RequestFrame
	}{
		{
			name: "params kept as sent",
			in:   `{"type":"req","id":"1","method":"chat.send","params":{ "sessionKey" : "main", "n": [1, 2] } }`,
			want: RequestFrame{Type: "req", ID: "1", Method: "chat.send", Params: json.RawMessage(`{ "sessionKey" : "main", "n": [1, 2] }`)},
		},
		{
			name: "no params",
			in:   `{"type":"req","id":"a","method":"health"}`,
			want: RequestFrame{Type: "req", ID: "a", Method: "health"},
		},
		{
			name: "null params kept",
			in:   `{"type":"req","id":"a","method":"health","params":null}`,
			want: RequestFrame{Type: "req", ID: "a", Method: "health", Params: json.RawMessage(`null`)},
		},
		{
			name: "scalar params",
			in:   `{"params":42,"method":"m","id":"x","type":"req"}`,
			want: RequestFrame{Type: "req", ID: "x", Method: "m", Params: json.RawMessage(`42`)},
		},
		{
			name: "v4 traceparent",
			in:   `{"type":"req","id":"1","method":"m","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`,
			want: RequestFrame{Type: "req", ID: "1", Method: "m", Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		},
		{
			name: "duplicate key: last value wins like JSON.parse",
			in:   `{"type":"req","id":"first","method":"m","id":"second"}`,
			want: RequestFrame{Type: "req", ID: "second", Method: "m"},
		},
		{
			name: "surrounding white space",
			in:   " \n{\"type\":\"req\",\"id\":\"1\",\"method\":\"m\"}\r\n ",
			want: RequestFrame{Type: "req", ID: "1", Method: "m"},
		},
		{
			name: "unicode id",
			in:   `{"type":"req","id":"\u00e9\ud83d\ude00","method":"m"}`,
			want: RequestFrame{Type: "req", ID: "é😀", Method: "m"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeRequest([]byte(tt.in))
			if err != nil {
				t.Fatalf("DecodeRequest: %v", err)
			}
			if got.Type != tt.want.Type || got.ID != tt.want.ID || got.Method != tt.want.Method ||
				got.Traceparent != tt.want.Traceparent || string(got.Params) != string(tt.want.Params) ||
				(got.Params == nil) != (tt.want.Params == nil) {
				t.Errorf("got %+v (params %q), want %+v (params %q)", got, got.Params, tt.want, tt.want.Params)
			}
		})
	}
}

func TestDecodeRequestErrors(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		id        string
		message   string
		malformed bool
	}{
		{"not JSON", `{"type":`, "invalid", "invalid request frame: invalid JSON", true},
		{"empty", ``, "invalid", "invalid request frame: invalid JSON", true},
		{"trailing data", `{"type":"req","id":"1","method":"m"} {}`, "invalid", "invalid request frame: invalid JSON", true},
		{"array", `[1,2]`, "invalid", "invalid request frame: must be object", false},
		{"string", `"req"`, "invalid", "invalid request frame: must be object", false},
		{"null", `null`, "invalid", "invalid request frame: must be object", false},
		{"wrong type value", `{"type":"res","id":"9","method":"m"}`, "9",
			"invalid request frame: at /type: must be equal to constant", false},
		{"type not a string", `{"type":5,"id":"9","method":"m"}`, "9",
			"invalid request frame: at /type: must be string; at /type: must be equal to constant", false},
		{"missing id", `{"type":"req","method":"m"}`, "invalid",
			"invalid request frame: must have required property 'id'", false},
		{"empty id", `{"type":"req","id":"","method":"m"}`, "invalid",
			"invalid request frame: at /id: must NOT have fewer than 1 characters", false},
		{"numeric id", `{"type":"req","id":7,"method":"m"}`, "invalid",
			"invalid request frame: at /id: must be string", false},
		{"empty method", `{"type":"req","id":"1","method":""}`, "1",
			"invalid request frame: at /method: must NOT have fewer than 1 characters", false},
		{"unknown member", `{"type":"req","id":"7","method":"m","foo":1}`, "7",
			"invalid request frame: at root: unexpected property 'foo'", false},
		{"unknown members in JavaScript key order", `{"type":"req","id":"1","method":"m","b":1,"2":1,"1":1,"01":1}`, "1",
			"invalid request frame: at root: unexpected property '1'; at root: unexpected property '2'; " +
				"at root: unexpected property 'b'; at root: unexpected property '01'", false},
		{"blank unknown member", `{"type":"req","id":"1","method":"m"," ":1}`, "1",
			"invalid request frame: must NOT have additional properties", false},
		{"every kind of error, AJV order", `{"id":"","extra":true,"method":5}`, "invalid",
			"invalid request frame: must have required property 'type'; at root: unexpected property 'extra'; " +
				"at /id: must NOT have fewer than 1 characters; at /method: must be string", false},
		{"traceparent too long", `{"type":"req","id":"1","method":"m","traceparent":"` + strings.Repeat("a", 129) + `"}`, "1",
			"invalid request frame: at /traceparent: must NOT have more than 128 characters", false},
		{"traceparent not a string", `{"type":"req","id":"1","method":"m","traceparent":1}`, "1",
			"invalid request frame: at /traceparent: must be string", false},
		{"event frame", `{"type":"event","event":"tick"}`, "invalid",
			"invalid request frame: must have required property 'id'; must have required property 'method'; " +
				"at root: unexpected property 'event'; at /type: must be equal to constant", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRequest([]byte(tt.in))
			var fe *FrameError
			if !errors.As(err, &fe) {
				t.Fatalf("error = %v, want *FrameError", err)
			}
			if fe.ID != tt.id || fe.Message != tt.message || fe.Malformed != tt.malformed {
				t.Errorf("got {ID:%q Message:%q Malformed:%v}\nwant {ID:%q Message:%q Malformed:%v}",
					fe.ID, fe.Message, fe.Malformed, tt.id, tt.message, tt.malformed)
			}
			if es := fe.ErrorShape(); es.Code != CodeInvalidRequest || es.Message != tt.message {
				t.Errorf("ErrorShape() = %+v", es)
			}
		})
	}
}

// The traceparent limit counts characters, not bytes, as AJV does.
func TestDecodeRequestTraceparentCountsCharacters(t *testing.T) {
	in := `{"type":"req","id":"1","method":"m","traceparent":"` + strings.Repeat("é", 128) + `"}`
	if _, err := DecodeRequest([]byte(in)); err != nil {
		t.Fatalf("128 two-byte characters rejected: %v", err)
	}
}

func TestPeekType(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{`{"type":"req","id":"1"}`, "req", true},
		{`{"type":"event"}`, "event", true},
		{`{"id":"1"}`, "", false},
		{`{"type":3}`, "", false},
		{`[]`, "", false},
		{`nope`, "", false},
		{`{"type":"a","type":"b"}`, "b", true},
	}
	for _, tt := range tests {
		got, ok := PeekType([]byte(tt.in))
		if got != tt.want || ok != tt.ok {
			t.Errorf("PeekType(%s) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestFrameJSON(t *testing.T) {
	seq := int64(42)
	retry := int64(500)
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"ok response", OK("1", map[string]int{"x": 1}), `{"type":"res","id":"1","ok":true,"payload":{"x":1}}`},
		{"ok response without payload", OK("1", nil), `{"type":"res","id":"1","ok":true}`},
		{"failed response", Fail("invalid", InvalidRequest("invalid request frame: must be object", nil)),
			`{"type":"res","id":"invalid","ok":false,"error":{"code":"INVALID_REQUEST","message":"invalid request frame: must be object"}}`},
		{"error with every member", &ErrorShape{Code: CodeUnavailable, Message: "busy", Details: map[string]string{"reason": "startup-sidecars"}, Retryable: true, RetryAfterMs: &retry},
			`{"code":"UNAVAILABLE","message":"busy","details":{"reason":"startup-sidecars"},"retryable":true,"retryAfterMs":500}`},
		{"challenge event", Event(EventConnectChallenge, ChallengePayload{Nonce: "n-1", Ts: 1700000000000}),
			`{"type":"event","event":"connect.challenge","payload":{"nonce":"n-1","ts":1700000000000}}`},
		{"broadcast event", EventFrame{Type: TypeEvent, Event: "health", Payload: map[string]bool{"ok": true}, Seq: &seq, StateVersion: &StateVersion{Presence: 3, Health: 7}},
			`{"type":"event","event":"health","payload":{"ok":true},"seq":42,"stateVersion":{"presence":3,"health":7}}`},
		{"tick", Event(EventTick, TickPayload{Ts: 5}), `{"type":"event","event":"tick","payload":{"ts":5}}`},
		{"shutdown", Event(EventShutdown, ShutdownPayload{Reason: "gateway stopping"}), `{"type":"event","event":"shutdown","payload":{"reason":"gateway stopping"}}`},
		{"request", RequestFrame{Type: TypeRequest, ID: "1", Method: "m", Params: json.RawMessage(`{"a":1}`)}, `{"type":"req","id":"1","method":"m","params":{"a":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
