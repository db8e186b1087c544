package protocol

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

const minimalConnect = `{"minProtocol":3,"maxProtocol":4,"client":{"id":"cli","version":"1.2.3","platform":"linux","mode":"cli"}}`

func TestValidateConnectMinimal(t *testing.T) {
	p, err := ValidateConnect(json.RawMessage(minimalConnect))
	if err != nil {
		t.Fatal(err)
	}
	want := ConnectParams{
		MinProtocol: 3, MaxProtocol: 4,
		Client: ClientInfo{ID: "cli", Version: "1.2.3", Platform: "linux", Mode: "cli"},
		Role:   RoleOperator, Scopes: []string{},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got  %+v\nwant %+v", p, want)
	}
	if p.Scopes == nil {
		t.Error("Scopes is nil; want an empty list (default-deny)")
	}
}

func TestValidateConnectFull(t *testing.T) {
	in := `{
	  "minProtocol": 3, "maxProtocol": 3,
	  "client": {"id": "openclaw-ios", "displayName": "Phone", "version": "2026.4.1", "platform": "iOS 18.4",
	             "deviceFamily": "iPhone", "modelIdentifier": "iPhone17,1", "mode": "node", "instanceId": "inst-1"},
	  "caps": ["camera", "voice"], "commands": ["camera.snap"], "permissions": {"camera": true, "location": false},
	  "pathEnv": "/usr/bin", "role": "node", "scopes": ["operator.read"],
	  "device": {"id": "abc", "publicKey": "key", "signature": "sig", "signedAt": 1700000000000, "nonce": "n"},
	  "auth": {"token": "t", "bootstrapToken": "b", "deviceToken": "d", "password": "p"},
	  "locale": "en-US", "userAgent": "openclaw-ios/2026.4.1"
	}`
	p, err := ValidateConnect(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	want := ConnectParams{
		MinProtocol: 3, MaxProtocol: 3,
		Client: ClientInfo{ID: "openclaw-ios", DisplayName: "Phone", Version: "2026.4.1", Platform: "iOS 18.4",
			DeviceFamily: "iPhone", ModelIdentifier: "iPhone17,1", Mode: "node", InstanceID: "inst-1"},
		Caps: []string{"camera", "voice"}, Commands: []string{"camera.snap"},
		Permissions: map[string]bool{"camera": true, "location": false},
		PathEnv:     "/usr/bin", Role: RoleNode, Scopes: []string{"operator.read"},
		Device: &ConnectDevice{ID: "abc", PublicKey: "key", Signature: "sig", SignedAt: 1700000000000, Nonce: "n"},
		Auth:   &ConnectAuth{Token: "t", BootstrapToken: "b", DeviceToken: "d", Password: "p"},
		Locale: "en-US", UserAgent: "openclaw-ios/2026.4.1",
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got  %+v\nwant %+v", p, want)
	}
	if !p.HasCap("camera") || p.HasCap(CapToolEvents) {
		t.Error("HasCap")
	}
}

// connectWith returns minimalConnect with members replaced or added.
func connectWith(t *testing.T, patch map[string]any) json.RawMessage {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(minimalConnect), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range patch {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func client(patch map[string]any) map[string]any {
	c := map[string]any{"id": "cli", "version": "1.2.3", "platform": "linux", "mode": "cli"}
	for k, v := range patch {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

func TestValidateConnectErrors(t *testing.T) {
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	tests := []struct {
		name string
		in   json.RawMessage
		want string
	}{
		{"absent params", nil, "must be object"},
		{"null params", raw(`null`), "must be object"},
		{"array params", raw(`[]`), "must be object"},
		{"not JSON", raw(`{"minProtocol":1 "maxProtocol":1}`), "invalid JSON"},
		{"empty object", raw(`{}`),
			"must have required property 'minProtocol'; must have required property 'maxProtocol'; must have required property 'client'"},
		{"unknown client id", connectWith(t, map[string]any{"client": client(map[string]any{"id": "my-bot"})}),
			"at /client/id: must be equal to one of the allowed values"},
		{"client id is case-sensitive", connectWith(t, map[string]any{"client": client(map[string]any{"id": "CLI"})}),
			"at /client/id: must be equal to one of the allowed values"},
		{"client id not a string", connectWith(t, map[string]any{"client": client(map[string]any{"id": 1})}),
			"at /client/id: must be equal to one of the allowed values"},
		{"unknown client mode", connectWith(t, map[string]any{"client": client(map[string]any{"mode": "operator"})}),
			"at /client/mode: must be equal to one of the allowed values"},
		{"protocol zero", connectWith(t, map[string]any{"minProtocol": 0}), "at /minProtocol: must be >= 1"},
		{"protocol fraction above minimum", connectWith(t, map[string]any{"maxProtocol": 3.5}), "at /maxProtocol: must be integer"},
		{"protocol fraction below minimum", connectWith(t, map[string]any{"minProtocol": 0.5}),
			"at /minProtocol: must be integer; at /minProtocol: must be >= 1"},
		{"protocol as string", connectWith(t, map[string]any{"minProtocol": "3"}), "at /minProtocol: must be integer"},
		{"protocol overflowing to Infinity", raw(`{"minProtocol":1e400,"maxProtocol":3,"client":{"id":"cli","version":"1","platform":"p","mode":"cli"}}`),
			"at /minProtocol: must be integer"},
		{"client not an object", connectWith(t, map[string]any{"client": "cli"}), "at /client: must be object"},
		{"client missing platform", connectWith(t, map[string]any{"client": client(map[string]any{"platform": nil})}),
			"at /client: must have required property 'platform'"},
		{"empty client version", connectWith(t, map[string]any{"client": client(map[string]any{"version": ""})}),
			"at /client/version: must NOT have fewer than 1 characters"},
		{"empty display name", connectWith(t, map[string]any{"client": client(map[string]any{"displayName": ""})}),
			"at /client/displayName: must NOT have fewer than 1 characters"},
		{"unknown client member", connectWith(t, map[string]any{"client": client(map[string]any{"gitSha": "x"})}),
			"at /client: unexpected property 'gitSha'"},
		{"long client buildId", connectWith(t, map[string]any{"client": client(map[string]any{"buildId": strings.Repeat("b", 97)})}),
			"at /client/buildId: must NOT have more than 96 characters"},
		{"empty client timeZone", connectWith(t, map[string]any{"client": client(map[string]any{"timeZone": ""})}),
			"at /client/timeZone: must NOT have fewer than 1 characters"},
		{"partial device", connectWith(t, map[string]any{"device": map[string]any{"id": "d", "publicKey": "k"}}),
			"at /device: must have required property 'signature'; at /device: must have required property 'signedAt'; at /device: must have required property 'nonce'"},
		{"negative signedAt", connectWith(t, map[string]any{"device": map[string]any{"id": "d", "publicKey": "k", "signature": "s", "signedAt": -1, "nonce": "n"}}),
			"at /device/signedAt: must be >= 0"},
		{"empty device nonce", connectWith(t, map[string]any{"device": map[string]any{"id": "d", "publicKey": "k", "signature": "s", "signedAt": 1, "nonce": ""}}),
			"at /device/nonce: must NOT have fewer than 1 characters"},
		{"unknown auth member", connectWith(t, map[string]any{"auth": map[string]any{"apiKey": "x"}}),
			"at /auth: unexpected property 'apiKey'"},
		{"auth token not a string", connectWith(t, map[string]any{"auth": map[string]any{"token": 5}}),
			"at /auth/token: must be string"},
		{"empty scope", connectWith(t, map[string]any{"scopes": []string{"operator.read", ""}}),
			"at /scopes/1: must NOT have fewer than 1 characters"},
		{"scopes not an array", connectWith(t, map[string]any{"scopes": "operator.read"}), "at /scopes: must be array"},
		{"permission not a boolean", connectWith(t, map[string]any{"permissions": map[string]any{"camera": "yes"}}),
			"at /permissions/camera: must be boolean"},
		{"JSON pointer escaping", connectWith(t, map[string]any{"permissions": map[string]any{"a/b~c": 1}}),
			"at /permissions/a~1b~0c: must be boolean"},
		{"unknown top-level member", connectWith(t, map[string]any{"transports": []string{"json-ws"}}),
			"at root: unexpected property 'transports'"},
		{"empty role", connectWith(t, map[string]any{"role": ""}), "at /role: must NOT have fewer than 1 characters"},
		{"several errors at once", raw(`{"minProtocol":0,"client":{"id":"x","version":"","platform":"p","mode":"cli"},"x":1}`),
			"must have required property 'maxProtocol'; at root: unexpected property 'x'; at /minProtocol: must be >= 1; " +
				"at /client/id: must be equal to one of the allowed values; at /client/version: must NOT have fewer than 1 characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ValidateConnect(tt.in)
			var ce *ConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v, want *ConnectError", err)
			}
			if want := "invalid connect params: " + tt.want; ce.Message != want {
				t.Errorf("got  %q\nwant %q", ce.Message, want)
			}
		})
	}
}

func TestValidateConnectRole(t *testing.T) {
	for _, role := range []string{RoleOperator, RoleNode} {
		p, err := ValidateConnect(connectWith(t, map[string]any{"role": role}))
		if err != nil || p.Role != role {
			t.Errorf("role %q: got %q, %v", role, p.Role, err)
		}
	}
	p, err := ValidateConnect(connectWith(t, map[string]any{"role": "admin", "scopes": []string{"operator.admin"}}))
	if !errors.Is(err, ErrInvalidRole) || err.Error() != "invalid role" {
		t.Fatalf("error = %v, want ErrInvalidRole", err)
	}
	if p.Role != "admin" || p.Client.ID != "cli" || p.MaxProtocol != 4 {
		t.Errorf("params not decoded alongside ErrInvalidRole: %+v", p)
	}
}

func TestValidateConnectNumbers(t *testing.T) {
	in := `{"minProtocol":3.0,"maxProtocol":1e20,"client":{"id":"cli","version":"1","platform":"p","mode":"cli"},` +
		`"device":{"id":"d","publicKey":"k","signature":"s","signedAt":1.7e12,"nonce":"n"}}`
	p, err := ValidateConnect(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	if p.MinProtocol != 3 || p.MaxProtocol != math.MaxInt || p.Device.SignedAt != 1_700_000_000_000 {
		t.Errorf("got min %d max %d signedAt %d", p.MinProtocol, p.MaxProtocol, p.Device.SignedAt)
	}
	if v, ok := Negotiate(p.MinProtocol, p.MaxProtocol); !ok || v != 4 {
		t.Errorf("Negotiate = %d, %v", v, ok)
	}
}

func TestNegotiate(t *testing.T) {
	tests := []struct {
		min, max int
		want     int
		ok       bool
	}{
		{3, 3, 3, true},
		{3, 4, 4, true},
		{4, 4, 4, true},
		{1, 3, 3, true},
		{1, 99, 4, true},
		{2, 3, 3, true},
		{1, 2, 0, false},
		{5, 9, 0, false},
		{4, 3, 0, false},
		{1, math.MaxInt, 4, true},
	}
	for _, tt := range tests {
		got, ok := Negotiate(tt.min, tt.max)
		if got != tt.want || ok != tt.ok {
			t.Errorf("Negotiate(%d, %d) = %d, %v; want %d, %v", tt.min, tt.max, got, ok, tt.want, tt.ok)
		}
	}
}

func TestCheckConnect(t *testing.T) {
	longID := strings.Repeat("x", 200)
	tests := []struct {
		name        string
		in          json.RawMessage
		wantVersion int
		wantError   string
		wantDetails string
		closeCode   int
		closeReason string
	}{
		{name: "accepted", in: json.RawMessage(minimalConnect), wantVersion: 4},
		{name: "v3 only client", in: connectWith(t, map[string]any{"maxProtocol": 3}), wantVersion: 3},
		{name: "schema failure", in: connectWith(t, map[string]any{"client": client(map[string]any{"id": longID})}),
			wantError:   `{"code":"INVALID_REQUEST","message":"invalid connect params: at /client/id: must be equal to one of the allowed values"}`,
			closeCode:   1008,
			closeReason: "invalid connect params: at /client/id: must be equal to one of the allowed values"},
		{name: "protocol checked before role", in: connectWith(t, map[string]any{"minProtocol": 1, "maxProtocol": 2, "role": "root"}),
			wantError: `{"code":"INVALID_REQUEST","message":"protocol mismatch","details":{"expectedProtocol":4,"minProtocol":3,"maxProtocol":4}}`,
			closeCode: 1002, closeReason: "protocol mismatch"},
		{name: "invalid role", in: connectWith(t, map[string]any{"role": "root"}),
			wantError: `{"code":"INVALID_REQUEST","message":"invalid role"}`,
			closeCode: 1008, closeReason: "invalid role"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, version, rej := CheckConnect(tt.in)
			if tt.wantError == "" {
				if rej != nil {
					t.Fatalf("rejected: %+v", rej.Error)
				}
				if version != tt.wantVersion || p.Role != RoleOperator {
					t.Errorf("version %d role %q", version, p.Role)
				}
				return
			}
			if rej == nil {
				t.Fatal("accepted")
			}
			got, _ := json.Marshal(rej.Error)
			if string(got) != tt.wantError {
				t.Errorf("error\ngot  %s\nwant %s", got, tt.wantError)
			}
			if rej.CloseCode != tt.closeCode || rej.CloseReason != tt.closeReason {
				t.Errorf("close %d %q, want %d %q", rej.CloseCode, rej.CloseReason, tt.closeCode, tt.closeReason)
			}
		})
	}
}

// A long validation message is cut to 120 bytes for the close reason.
func TestCheckConnectTruncatesCloseReason(t *testing.T) {
	in := connectWith(t, map[string]any{"x1": 1, "x2": 2, "x3": 3, "x4": 4})
	_, _, rej := CheckConnect(in)
	if rej == nil {
		t.Fatal("accepted")
	}
	if len(rej.CloseReason) != 120 || !strings.HasPrefix(rej.Error.Message, rej.CloseReason) {
		t.Errorf("close reason %q (%d bytes) for message %q", rej.CloseReason, len(rej.CloseReason), rej.Error.Message)
	}
}

func TestConnectParamsJSONRoundTrip(t *testing.T) {
	p, err := ValidateConnect(json.RawMessage(minimalConnect))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"minProtocol":3,"maxProtocol":4,"client":{"id":"cli","version":"1.2.3","platform":"linux","mode":"cli"},"role":"operator","scopes":[]}`; string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}
