package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// freePort returns a port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// A remote device is refused with a requestId; `switchboard devices approve`
// approves it through the running daemon, and it connects. With the daemon
// stopped, `devices list` reads the store directly.
func TestDevicesApproveThroughTheRunningDaemon(t *testing.T) {
	state := t.TempDir()
	env := map[string]string{"SWITCHBOARD_STATE_DIR": state}
	cfgPath := testConfig(t, freePort(t))
	tc := newTestCLI(env)
	done := make(chan int, 1)
	go func() { done <- tc.run("run", "--config", cfgPath, "--log-format", "json") }()
	base := "http://" + listenAddr(t, tc.err.String)
	waitReady(t, base)

	tokCLI := newTestCLI(env)
	if code := tokCLI.run("gateway", "token", "--config", cfgPath); code != exitOK {
		t.Fatalf("gateway token: exit %d: %s", code, tokCLI.err.String())
	}
	token := strings.TrimSpace(tokCLI.out.String())

	_, dev, _ := ed25519.GenerateKey(nil)
	o := client.Options{
		URL: strings.Replace(base, "http", "ws", 1) + "/", Token: token, Device: dev,
		Scopes: []string{protocol.ScopeRead, protocol.ScopeWrite},
		Header: http.Header{"X-Forwarded-For": {"198.51.100.4"}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.Dial(ctx, o)
	var ce *client.ConnectError
	if !errors.As(err, &ce) || client.Detail(ce, "code") != protocol.DetailPairingRequired {
		t.Fatalf("remote device: %v, want PAIRING_REQUIRED", err)
	}
	reqID := client.Detail(ce, "requestId")

	list := newTestCLI(env)
	if code := list.run("devices", "list", "--config", cfgPath); code != exitOK || !strings.Contains(list.out.String(), reqID) {
		t.Fatalf("devices list: exit %d\n%s%s", code, list.out.String(), list.err.String())
	}
	approve := newTestCLI(env)
	if code := approve.run("devices", "approve", "--config", cfgPath, reqID); code != exitOK {
		t.Fatalf("devices approve: exit %d: %s", code, approve.err.String())
	}
	c, err := client.Dial(ctx, o)
	if err != nil {
		t.Fatalf("approved device: %v", err)
	}
	c.Close()
	if strings.Contains(tc.err.String(), token) {
		t.Errorf("the gateway token appears in the daemon's logs")
	}

	tc.sigs <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Fatalf("run exit %d: %s", code, tc.err.String())
	}
	// No daemon: the store is read directly.
	offline := newTestCLI(env)
	if code := offline.run("devices", "list", "--config", cfgPath); code != exitOK || !strings.Contains(offline.out.String(), "Paired devices: 1") {
		t.Fatalf("devices list offline: exit %d\n%s%s", code, offline.out.String(), offline.err.String())
	}
	bad := newTestCLI(env)
	if code := bad.run("devices", "approve", "--config", cfgPath, "no-such-request"); code != exitFailure || !strings.Contains(bad.err.String(), "unknown pairing request") {
		t.Errorf("approve of an unknown request: exit %d: %s", code, bad.err.String())
	}
}
