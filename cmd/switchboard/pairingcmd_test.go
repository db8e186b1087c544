package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// A code an unknown Telegram sender got is listed and approved with
// `switchboard pairing`, through the running daemon; with the daemon
// stopped, the store is used directly.
func TestPairingApproveThroughTheRunningDaemon(t *testing.T) {
	state := t.TempDir()
	st, err := store.Open(t.Context(), state)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ sender, code string }{{"42", "ABCD2345"}, {"43", "EFGH2345"}} {
		if _, _, err := st.CreateChannelPairingCode(t.Context(), store.ChannelPairingCode{
			Channel: "telegram", AccountID: "default", SenderID: c.sender, SenderName: "Ada", CreatedAt: time.Now().UnixMilli(),
		}, 0, 3, func() string { return c.code }); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	env := map[string]string{"SWITCHBOARD_STATE_DIR": state}
	cfgPath := testConfig(t, freePort(t))
	tc := newTestCLI(env)
	done := make(chan int, 1)
	go func() { done <- tc.run("run", "--config", cfgPath, "--log-format", "json") }()
	waitReady(t, "http://"+listenAddr(t, tc.err.String))

	list := newTestCLI(env)
	if code := list.run("pairing", "list", "--config", cfgPath, "telegram"); code != exitOK || !strings.Contains(list.out.String(), "ABCD2345") || !strings.Contains(list.out.String(), "Pending pairing codes: 2") {
		t.Fatalf("pairing list: exit %d\n%s%s", code, list.out.String(), list.err.String())
	}
	approve := newTestCLI(env)
	if code := approve.run("pairing", "approve", "--config", cfgPath, "telegram", "abcd2345"); code != exitOK || !strings.Contains(approve.out.String(), "sender 42") {
		t.Fatalf("pairing approve: exit %d: %s%s", code, approve.out.String(), approve.err.String())
	}
	bad := newTestCLI(env)
	if code := bad.run("pairing", "approve", "--config", cfgPath, "telegram", "ZZZZ9999"); code != exitFailure || !strings.Contains(bad.err.String(), "unknown pairing code") {
		t.Errorf("approve of an unknown code: exit %d: %s", code, bad.err.String())
	}

	tc.sigs <- os.Interrupt
	if code := <-done; code != exitOK {
		t.Fatalf("run exit %d: %s", code, tc.err.String())
	}
	reject := newTestCLI(env)
	if code := reject.run("pairing", "reject", "--config", cfgPath, "telegram", "EFGH2345"); code != exitOK {
		t.Fatalf("pairing reject offline: exit %d: %s", code, reject.err.String())
	}
	offline := newTestCLI(env)
	if code := offline.run("pairing", "list", "--config", cfgPath); code != exitOK ||
		!strings.Contains(offline.out.String(), "Approved senders: 1") || !strings.Contains(offline.out.String(), "Pending pairing codes: 0") {
		t.Fatalf("pairing list offline: exit %d\n%s%s", code, offline.out.String(), offline.err.String())
	}
	usage := newTestCLI(env)
	if code := usage.run("pairing", "approve", "--config", cfgPath, "telegram"); code != exitUsage {
		t.Errorf("approve with one argument: exit %d", code)
	}
	// Issue 26, finding 10: a misspelt channel is named, with the closest
	// one, by approve and reject and by list (which listed nothing).
	for _, args := range [][]string{{"approve", "telgram", "EFGH2345"}, {"reject", "Telgram", "EFGH2345"}, {"list", "telgram"}} {
		typo := newTestCLI(env)
		if code := typo.run(append([]string{"pairing", args[0], "--config", cfgPath}, args[1:]...)...); code != exitUsage ||
			!strings.Contains(typo.err.String(), `is not a channel (did you mean "telegram"?); write one of telegram, slack, discord, whatsapp`) {
			t.Errorf("pairing %v on a misspelt channel: exit %d: %s", args, code, typo.err.String())
		}
	}
}
