package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// sampleHello is one hello-ok with every field set, so the golden files show
// what each version keeps and drops.
func sampleHello() HelloOk {
	issued := int64(1_700_000_000_000)
	idle := int64(12)
	return HelloOk{
		Server:   ServerInfo{Version: "0.4.0", Commit: "f5b2c32", Host: "gw-host", ConnID: "5f0c8e8e-1c1d-4d7a-9a65-3b0f8d1f6a11"},
		Features: Features{Methods: []string{"health", "chat.send", "chat.history", "chat.abort"}, Events: []string{"connect.challenge", "chat", "agent", "tick"}},
		Snapshot: Snapshot{
			Presence: []PresenceEntry{{
				Host: "Phone", Version: "2026.4.1", Platform: "iOS 18.4", DeviceFamily: "iPhone",
				ModelIdentifier: "iPhone17,1", Mode: "ui", LastInputSeconds: &idle, Reason: "connect",
				Ts: 1_700_000_000_500, DeviceID: "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c",
				Roles: []string{"operator"}, Scopes: []string{"operator.read", "operator.write"}, InstanceID: "inst-1",
			}},
			Health:       map[string]any{"ok": true},
			StateVersion: StateVersion{Presence: 2, Health: 1},
			UptimeMs:     61_000,
			ConfigPath:   "/etc/switchboard/config.yaml",
			StateDir:     "/var/lib/switchboard",
			SessionDefaults: &SessionDefaults{
				DefaultAgentID: "main", MainKey: "main", MainSessionKey: "agent:main:main",
			},
			AuthMode: "token",
		},
		CanvasHostURL:     "http://127.0.0.1:18789/__canvas__/",
		PluginSurfaceURLs: map[string]string{"canvas": "http://127.0.0.1:18789/__canvas__/"},
		Auth: &HelloAuth{
			DeviceToken: "dt-1", Role: RoleOperator, Scopes: []string{"operator.read", "operator.write"}, IssuedAtMs: &issued,
		},
		Policy: DefaultPolicy(),
	}
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, got, "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("%s mismatch (run with -update after reviewing)\ngot:\n%s\nwant:\n%s", name, pretty.Bytes(), want)
	}
}

func TestHelloOkGoldenV3(t *testing.T) {
	got, err := sampleHello().MarshalFor(ProtocolV3)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "hello_ok_v3.json", got)
}

func TestHelloOkGoldenV4(t *testing.T) {
	got, err := sampleHello().MarshalFor(ProtocolV4)
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "hello_ok_v4.json", got)
}

func TestHelloOkMinimal(t *testing.T) {
	h := HelloOk{
		Server: ServerInfo{Version: "dev", ConnID: "c1"},
		Auth:   &HelloAuth{Role: RoleOperator},
		Policy: Policy{MaxPayload: MaxPayloadBytes, MaxBufferedBytes: MaxBufferedBytes, TickIntervalMs: TickIntervalMs},
	}
	v3, err := h.MarshalFor(ProtocolV3)
	if err != nil {
		t.Fatal(err)
	}
	// v3 leaves auth out without a device token: v3 clients require one.
	want3 := `{"type":"hello-ok","protocol":3,"server":{"version":"dev","connId":"c1"},"features":{"methods":[],"events":[]},` +
		`"snapshot":{"presence":[],"health":{},"stateVersion":{"presence":0,"health":0},"uptimeMs":0},` +
		`"policy":{"maxPayload":26214400,"maxBufferedBytes":52428800,"tickIntervalMs":30000}}`
	if string(v3) != want3 {
		t.Errorf("v3\ngot  %s\nwant %s", v3, want3)
	}
	v4, err := h.MarshalFor(ProtocolV4)
	if err != nil {
		t.Fatal(err)
	}
	want4 := `{"type":"hello-ok","protocol":4,"server":{"version":"dev","connId":"c1"},"features":{"methods":[],"events":[]},` +
		`"snapshot":{"presence":[],"health":{},"stateVersion":{"presence":0,"health":0},"uptimeMs":0},` +
		`"auth":{"role":"operator","scopes":[]},` +
		`"policy":{"maxPayload":26214400,"maxBufferedBytes":52428800,"tickIntervalMs":30000}}`
	if string(v4) != want4 {
		t.Errorf("v4\ngot  %s\nwant %s", v4, want4)
	}
	// MarshalFor works on a copy.
	if h.Auth.Scopes != nil || h.Type != "" {
		t.Error("MarshalFor modified its receiver")
	}
}

func TestHelloOkMarshalForErrors(t *testing.T) {
	if _, err := (HelloOk{}).MarshalFor(ProtocolV4); !errors.Is(err, ErrHelloAuthRequired) {
		t.Errorf("v4 without auth: %v", err)
	}
	for _, v := range []int{0, 2, 5} {
		if _, err := (HelloOk{}).MarshalFor(v); err == nil {
			t.Errorf("version %d accepted", v)
		}
	}
}
