package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/discord/discordtest"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// The bridges' default reconnect backoff starts at backoffStep and
// doubles (up to 60 s); each delay is drawn between half its step and the
// step. The supervisor's restarts use the same first step.
const backoffStep = time.Second

// connectSlack is what reconnectBound allows beyond the backoff: the
// handshake itself (auth.test and a Socket Mode hello, getMe, REST and a
// gateway READY) on a CI machine that is busy with other tests.
const connectSlack = 10 * time.Second

// reconnectBound is how long a bridge that has kept retrying through an
// outage may take, once its platform is back, to connect; down is how
// long the outage lasted since the bridge's first attempt (or longer).
// Attempt k comes at t(k) ≥ (2^k − 1)/2 steps (every earlier delay was at
// least half its step), so the delay after the last failed attempt
// (t(k) ≤ down) is at most 2^k steps ≤ 2·down + 1 step.
func reconnectBound(down time.Duration) time.Duration {
	return 2*down + backoffStep + connectSlack
}

// quietWindow is how long a bridge parked in a terminal state is watched
// for further attempts: twice the supervisor's first backoff step (its
// first restart would come 0.8–1 s after the failure), and the bridges'
// own.
const quietWindow = 2 * backoffStep

// outageFront stands between a bridge and its platform fake so that an
// outage looks, to the bridge's real client library, like one on the
// internet. While down it accepts each connection and resets it at once
// (what a load balancer with nothing healthy behind it does: the client
// reads "connection reset by peer"); while up it relays bytes both ways,
// so HTTP and WebSocket pass alike. It starts down.
type outageFront struct {
	ln      net.Listener
	target  string // the fake's host:port
	down    atomic.Bool
	changes bridgetest.Changes // wakes waitFor on every refused connection

	mu      sync.Mutex
	closed  bool
	refused int
	conns   map[net.Conn]bool // both ends of each relay, to cut them at close
	wg      sync.WaitGroup    // the accept loop and the relays
}

// newOutageFront starts a front, down, for the fake serving fakeURL; it is
// closed when the test ends (after the daemon, which starts later).
func newOutageFront(t *testing.T, fakeURL string) *outageFront {
	t.Helper()
	u, err := url.Parse(fakeURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &outageFront{ln: ln, target: u.Host, conns: map[net.Conn]bool{}}
	f.down.Store(true)
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.close)
	return f
}

// rebase returns fakeURL with the front's address in place of the fake's.
func (f *outageFront) rebase(fakeURL string) string {
	u, _ := url.Parse(fakeURL)
	u.Host = f.ln.Addr().String()
	return u.String()
}

// setDown starts (true) or ends an outage; starting one cuts the
// connections being relayed.
func (f *outageFront) setDown(down bool) {
	f.down.Store(down)
	if !down {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		_ = c.Close()
	}
}

// refusedConns counts the connections reset while down.
func (f *outageFront) refusedConns() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refused
}

// waitFor waits until cond holds, re-checking after every refused
// connection, or ctx ends.
func (f *outageFront) waitFor(ctx context.Context, cond func() bool) error {
	return f.changes.WaitFor(ctx, cond)
}

func (f *outageFront) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return // closed
		}
		if f.down.Load() {
			f.reset(c)
			continue
		}
		f.wg.Add(1)
		go f.relay(c)
	}
}

// reset closes c with a TCP RST instead of a FIN, as a refusing peer does.
func (f *outageFront) reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
	f.mu.Lock()
	f.refused++
	f.mu.Unlock()
	f.changes.Changed()
}

// relay copies between c and a new connection to the fake until either
// side ends.
func (f *outageFront) relay(c net.Conn) {
	defer f.wg.Done()
	back, err := net.Dial("tcp", f.target)
	if err != nil {
		f.reset(c)
		return
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		_ = c.Close()
		_ = back.Close()
		return
	}
	f.conns[c], f.conns[back] = true, true
	f.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(back, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, back); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = back.Close()
	<-done
	f.mu.Lock()
	delete(f.conns, c)
	delete(f.conns, back)
	f.mu.Unlock()
}

// close stops accepting, cuts every relay and waits for their goroutines.
func (f *outageFront) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	f.closed = true
	for c := range f.conns {
		_ = c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// outageRig is one platform's fake, starting in an outage, as
// TestOutageBridgeConnectsOnceThePlatformIsBack drives it.
type outageRig struct {
	channel string
	env     map[string]string
	yaml    string
	setup   []func(*testCLI)
	// attempts counts the bridge's failed attempts to reach the platform;
	// waitFor waits on their changes.
	attempts func() int
	waitFor  func(ctx context.Context, cond func() bool) error
	// duringOutage, when set, checks what the platform sees of the
	// daemon while it is down.
	duringOutage func(t *testing.T, ctx context.Context)
	// up ends the outage.
	up func()
	// converse sends a message through the fake and checks that the
	// daemon answers it with answer.
	converse func(t *testing.T, ctx context.Context, d *runningDaemon, answer string)
}

// connRefused is how a dial to a host that is down fails.
var connRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

var outageCases = []struct {
	name string
	rig  func(t *testing.T) *outageRig
}{
	{"telegram", func(t *testing.T) *outageRig {
		tg := telegramtest.New(t)
		front := newOutageFront(t, tg.URL)
		return &outageRig{
			channel: "telegram",
			env:     map[string]string{"TG_TOKEN": tg.Token},
			yaml: `channels:
  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: ` + front.rebase(tg.URL) + `
    dmPolicy: open
    allowFrom: ["*"]
    pollTimeoutSeconds: 1
`,
			attempts: front.refusedConns, waitFor: front.waitFor,
			up: func() { front.setDown(false) },
			converse: func(t *testing.T, ctx context.Context, d *runningDaemon, answer string) {
				tg.PushUpdate(tg.TextMessage(42, telegramtest.ChatPrivate, telegramtest.User{ID: 42, FirstName: "Ada"}, "are you back?"))
				sent, err := tg.WaitSent(ctx, 1)
				if err != nil {
					t.Fatalf("no answer on Telegram: %v\n%s", err, d.tc.err.String())
				}
				if sent[0].ChatID != 42 || sent[0].PlainText != answer {
					t.Errorf("answer = %+v, want %q in chat 42", sent[0], answer)
				}
			},
		}
	}},
	{"slack socket mode", func(t *testing.T) *outageRig {
		srv := slacktest.New(t)
		// The Web API (auth.test, apps.connections.open) is behind the
		// front; the Socket Mode URL it hands out is the fake's own.
		front := newOutageFront(t, srv.URL)
		return &outageRig{
			channel: "slack",
			env:     map[string]string{"SLACK_BOT": srv.BotToken, "SLACK_APP": srv.AppToken},
			yaml: `channels:
  slack:
    enabled: true
    botToken: ${SLACK_BOT}
    appToken: ${SLACK_APP}
    apiUrl: ` + front.rebase(srv.APIURL) + `
    dmPolicy: open
    allowFrom: ["*"]
`,
			attempts: front.refusedConns, waitFor: front.waitFor,
			up: func() { front.setDown(false) },
			converse: func(t *testing.T, ctx context.Context, d *runningDaemon, answer string) {
				if err := srv.WaitConnected(ctx, 1); err != nil {
					t.Fatalf("the bridge never opened Socket Mode: %v", err)
				}
				id := srv.PushEvent(srv.Message("D100", "U9", "are you back?", slacktest.WithChannelType("im")))
				if _, err := srv.WaitAck(ctx, id); err != nil {
					t.Fatalf("event not acked: %v\n%s", err, d.tc.err.String())
				}
				sent, err := srv.WaitSent(ctx, 1)
				if err != nil {
					t.Fatalf("no answer on Slack: %v\n%s", err, d.tc.err.String())
				}
				if sent[0].Channel != "D100" || sent[0].Text != answer {
					t.Errorf("answer = %+v, want %q in D100", sent[0], answer)
				}
			},
		}
	}},
	{"slack http mode", func(t *testing.T) *outageRig {
		srv := slacktest.New(t)
		front := newOutageFront(t, srv.URL)
		const secret = "8f742231b10e8888abcd99yyyzzz85a5"
		port := freePort(t)
		events := fmt.Sprintf("http://127.0.0.1:%d/slack/events", port)
		dm := srv.Message("D100", "U9", "are you back?", slacktest.WithChannelType("im"))
		return &outageRig{
			channel: "slack",
			env:     map[string]string{"SLACK_BOT": srv.BotToken, "SLACK_SECRET": secret},
			yaml: fmt.Sprintf(`channels:
  slack:
    enabled: true
    mode: http
    botToken: ${SLACK_BOT}
    signingSecret: ${SLACK_SECRET}
    apiUrl: %s
    http:
      listen: 127.0.0.1:%d
    dmPolicy: open
    allowFrom: ["*"]
`, front.rebase(srv.APIURL), port),
			attempts: front.refusedConns, waitFor: front.waitFor,
			duringOutage: func(t *testing.T, ctx context.Context) {
				// Until auth.test has named the bot, an event is refused
				// with a 5xx, so Slack delivers it again later.
				status, err := srv.PostEvent(ctx, events, secret, dm)
				if err != nil || status != http.StatusServiceUnavailable {
					t.Errorf("an event during the outage was answered %d, %v; want 503", status, err)
				}
			},
			up: func() { front.setDown(false) },
			converse: func(t *testing.T, ctx context.Context, d *runningDaemon, answer string) {
				// Slack's retry of the event refused during the outage.
				status, err := srv.PostEvent(ctx, events, secret, dm, slacktest.WithRetry(1, "http_error"))
				if err != nil || status != http.StatusOK {
					t.Fatalf("the retried event was answered %d, %v; want 200\n%s", status, err, d.tc.err.String())
				}
				sent, err := srv.WaitSent(ctx, 1)
				if err != nil {
					t.Fatalf("no answer on Slack: %v\n%s", err, d.tc.err.String())
				}
				if sent[0].Channel != "D100" || sent[0].Text != answer {
					t.Errorf("answer = %+v, want %q in D100", sent[0], answer)
				}
			},
		}
	}},
	{"discord", func(t *testing.T) *outageRig {
		srv := discordtest.New(t)
		// REST is behind the front; the gateway, whose URL GET
		// /gateway/bot hands out, has its own outage switch.
		front := newOutageFront(t, srv.URL)
		srv.SetOutage(true)
		ada := discordtest.User{ID: "2200000000000000001", Username: "ada"}
		return &outageRig{
			channel: "discord",
			env:     map[string]string{"DISCORD_TOKEN": srv.Token},
			yaml: `channels:
  discord:
    enabled: true
    token: ${DISCORD_TOKEN}
    apiUrl: ` + front.rebase(srv.APIURL) + `
    dmPolicy: open
    allowFrom: ["*"]
`,
			attempts: front.refusedConns, waitFor: front.waitFor,
			up: func() {
				srv.SetOutage(false)
				front.setDown(false)
			},
			converse: func(t *testing.T, ctx context.Context, d *runningDaemon, answer string) {
				dm := srv.DMChannel(ada)
				srv.PushMessageCreate(srv.DirectMessage(ada, "are you back?"))
				sent, err := srv.WaitSent(ctx, 1)
				if err != nil {
					t.Fatalf("no answer on Discord: %v\n%s", err, d.tc.err.String())
				}
				if sent[0].ChannelID != dm.ID || sent[0].Content != answer {
					t.Errorf("answer = %+v, want %q in the DM", sent[0], answer)
				}
			},
		}
	}},
	{"whatsapp", func(t *testing.T) *outageRig {
		state := t.TempDir()
		preLink(t, state, botJID)
		phone := whatsapptest.New()
		var down atomic.Bool
		down.Store(true)
		// WhatsApp's websocket cannot be dialled while down.
		phone.ConnectErr = func(int) error {
			if down.Load() {
				return fmt.Errorf("failed to dial whatsapp web websocket: %w", connRefused)
			}
			return nil
		}
		return &outageRig{
			channel:  whatsapp.Channel,
			env:      map[string]string{"SWITCHBOARD_STATE_DIR": state},
			yaml:     whatsappYAML,
			setup:    []func(*testCLI){withPhone(phone)},
			attempts: phone.Connects, waitFor: phone.WaitFor,
			up: func() { down.Store(false) },
			converse: func(t *testing.T, ctx context.Context, d *runningDaemon, answer string) {
				wa := phone.Last()
				if !wa.Emit(whatsapptest.Text(adaJID, adaJID, "3EB0OUTAGE0001", "are you back?")) {
					t.Fatalf("the message was not acked (not journaled):\n%s", d.tc.err.String())
				}
				if err := phone.WaitFor(ctx, func() bool { return len(sentTexts(wa, adaJID)) >= 1 }); err != nil {
					t.Fatalf("no answer on WhatsApp: %v\n%s", err, d.tc.err.String())
				}
				if got := sentTexts(wa, adaJID); got[0] != answer {
					t.Errorf("answer = %q, want %q", got, answer)
				}
			},
		}
	}},
}

// A daemon started while a platform is down is ready all the same, and
// reports the bridge transient-disconnect with the error while the bridge
// keeps trying; once the platform is back the bridge connects within its
// backoff, and a message through the platform is answered.
func TestOutageBridgeConnectsOnceThePlatformIsBack(t *testing.T) {
	for _, tt := range outageCases {
		t.Run(tt.name, func(t *testing.T) {
			const answer = "Back online."
			model := llmtest.NewAnthropicServer(t, llmtest.Text(answer))
			rig := tt.rig(t)
			began := time.Now()
			d := startDaemon(t, model, rig.env, rig.yaml, rig.setup...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			// Down: at least one retry, paced by the backoff, has failed too.
			if err := rig.waitFor(ctx, func() bool { return rig.attempts() >= 2 }); err != nil {
				t.Fatalf("%d attempts to reach the platform during the outage, want a retry: %v\n%s", rig.attempts(), err, d.tc.err.String())
			}
			d.waitChannel(t, rig.channel, "transient-disconnect")
			if code, body := get(t, d.base+"/readyz"); code != http.StatusOK || !strings.Contains(body, `"ready":true`) {
				t.Errorf("a platform outage made the daemon unready: /readyz = %d %s", code, body)
			}
			st := d.bridgeStatus(t, rig.channel)
			if st.State != "transient-disconnect" || st.Connected || st.LastError == "" || !st.Running {
				t.Errorf("channels.status during the outage = %+v, want running, transient-disconnect with the error", st)
			}
			if rig.duringOutage != nil {
				rig.duringOutage(t, ctx)
			}

			// Up.
			rig.up()
			upAt := time.Now()
			down := upAt.Sub(began)
			bound := reconnectBound(down)
			d.waitChannelWithin(t, rig.channel, "connected", bound)
			t.Logf("down for %v (%d attempts); connected %v after the platform came back (bound %v)",
				down.Round(time.Millisecond), rig.attempts(), time.Since(upAt).Round(time.Millisecond), bound)
			rig.converse(t, ctx, d, answer)
			if st := d.bridgeStatus(t, rig.channel); st.State != "connected" || !st.Connected {
				t.Errorf("channels.status after the outage = %+v", st)
			}
			d.stop(t)
		})
	}
}

// terminalRig is one platform's fake refusing the bridge for good, as
// TestOutageTerminalStateIsNotRetried drives it.
type terminalRig struct {
	channel string
	env     map[string]string
	yaml    string
	setup   []func(*testCLI)
	// refuse, when set, makes the platform refuse the bridge once the
	// daemon runs (a refusal that comes after connecting); otherwise the
	// fake refuses from the start.
	refuse func(t *testing.T, ctx context.Context, d *runningDaemon)
	// state is the terminal state expected, and wantErr a part of its
	// error.
	state, wantErr string
	// calls counts what reached the platform (requests, connections);
	// waitFor waits on its changes.
	calls   func() int
	waitFor func(ctx context.Context, cond func() bool) error
	// awaitsRelink marks a bridge that parks itself, still running, until
	// the owner links it again (`switchboard whatsapp link` starts it
	// anew without a daemon restart): its Start does not return, so the
	// supervisor has nothing to report, and the gate's state line is the
	// one report.
	awaitsRelink bool
}

// discordCalls counts REST requests and gateway connections.
func discordCalls(srv *discordtest.Server) func() int {
	return func() int { return len(srv.Requests()) + srv.Connections() }
}

var terminalCases = []struct {
	name string
	rig  func(t *testing.T) *terminalRig
}{
	{"telegram getMe 401", func(t *testing.T) *terminalRig {
		tg := telegramtest.New(t)
		// A revoked token: getMe answers 401 Unauthorized. Only the first
		// call is refused, so a retry would show as a second getMe and a
		// connected bridge. (A token the fake does not know gets the same
		// 401, but goes unrecorded, and the point is to count.)
		tg.FailNext("getMe", http.StatusUnauthorized, "Unauthorized", 0)
		return &terminalRig{
			channel: "telegram",
			env:     map[string]string{"TG_TOKEN": tg.Token},
			yaml: `channels:
  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: ` + tg.URL + `
    dmPolicy: open
    allowFrom: ["*"]
    pollTimeoutSeconds: 1
`,
			state: "bad-credentials", wantErr: "telegram refused the bot token",
			calls:   func() int { return len(tg.Requests()) },
			waitFor: tg.WaitFor,
		}
	}},
	{"slack invalid_auth", func(t *testing.T) *terminalRig {
		srv := slacktest.New(t)
		return &terminalRig{
			channel: "slack",
			env:     map[string]string{"SLACK_BOT": "xoxb-1000000001-2000000002-RevokedBotToken", "SLACK_APP": srv.AppToken},
			yaml: `channels:
  slack:
    enabled: true
    botToken: ${SLACK_BOT}
    appToken: ${SLACK_APP}
    apiUrl: ` + srv.APIURL + `
    dmPolicy: open
    allowFrom: ["*"]
`,
			state: "bad-credentials", wantErr: "invalid_auth",
			calls:   func() int { return len(srv.Requests()) },
			waitFor: srv.WaitFor,
		}
	}},
	{"discord 401", func(t *testing.T) *terminalRig {
		srv := discordtest.New(t)
		return &terminalRig{
			channel: "discord",
			env:     map[string]string{"DISCORD_TOKEN": "MTEwMDAwMDAwMDAwMDAwMDAwMQ.GdTest.revoked-token"},
			yaml: `channels:
  discord:
    enabled: true
    token: ${DISCORD_TOKEN}
    apiUrl: ` + srv.APIURL + `
    dmPolicy: open
    allowFrom: ["*"]
`,
			state: "bad-credentials", wantErr: "401",
			calls: discordCalls(srv), waitFor: srv.WaitFor,
		}
	}},
	{"discord gateway 4004", func(t *testing.T) *terminalRig {
		srv := discordtest.New(t)
		return &terminalRig{
			channel: "discord",
			env:     map[string]string{"DISCORD_TOKEN": srv.Token},
			yaml: `channels:
  discord:
    enabled: true
    token: ${DISCORD_TOKEN}
    apiUrl: ` + srv.APIURL + `
    dmPolicy: open
    allowFrom: ["*"]
`,
			// Connected, then the token is reset in the Developer Portal.
			refuse: func(t *testing.T, ctx context.Context, d *runningDaemon) {
				d.waitChannel(t, "discord", "connected")
				srv.CloseWith(discordtest.CloseCode(4004), "")
			},
			state: "bad-credentials", wantErr: "4004",
			calls: discordCalls(srv), waitFor: srv.WaitFor,
		}
	}},
	{"whatsapp logged out", func(t *testing.T) *terminalRig {
		state := t.TempDir()
		preLink(t, state, botJID)
		phone := whatsapptest.New()
		phone.NoAutoLogin = true
		return &terminalRig{
			channel: whatsapp.Channel,
			env:     map[string]string{"SWITCHBOARD_STATE_DIR": state},
			yaml:    whatsappYAML,
			setup:   []func(*testCLI){withPhone(phone)},
			// The device was unlinked from the phone: WhatsApp refuses its
			// login.
			refuse: func(t *testing.T, ctx context.Context, d *runningDaemon) {
				if err := phone.WaitFor(ctx, func() bool { return phone.Connects() >= 1 }); err != nil {
					t.Fatalf("the bridge never connected: %v", err)
				}
				phone.Last().Emit(&events.ConnectFailure{Reason: events.ConnectFailureLoggedOut})
			},
			state: "logged-out", wantErr: "link it again",
			calls: phone.Connects, waitFor: phone.WaitFor,
			awaitsRelink: true,
		}
	}},
}

// stopWarning is the supervisor's report of a bridge parked for good.
const stopWarning = "bridge stopped and will not be restarted"

// A platform that refuses the bridge's credentials parks it: the state is
// terminal, nothing more reaches the platform for longer than the first
// backoff step, channels.status shows the error and no restarts, and the
// daemon log reports it once.
func TestOutageTerminalStateIsNotRetried(t *testing.T) {
	for _, tt := range terminalCases {
		t.Run(tt.name, func(t *testing.T) {
			model := llmtest.NewAnthropicServer(t)
			rig := tt.rig(t)
			d := startDaemon(t, model, rig.env, rig.yaml, rig.setup...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if rig.refuse != nil {
				rig.refuse(t, ctx, d)
			}
			d.waitChannel(t, rig.channel, rig.state)
			if !rig.awaitsRelink && !eventually(10*time.Second, func() bool { return len(logRecords(d.tc.err.String(), stopWarning, rig.channel)) > 0 }) {
				t.Fatalf("no %q warning:\n%s", stopWarning, d.tc.err.String())
			}

			// Nothing more reaches the platform across the first backoff
			// steps (the wait ends early, failing, if anything does).
			n := rig.calls()
			quiet, cancelQuiet := context.WithTimeout(ctx, quietWindow)
			err := rig.waitFor(quiet, func() bool { return rig.calls() != n })
			cancelQuiet()
			if err == nil || ctx.Err() != nil {
				t.Errorf("after %s the bridge reached the platform again (%d calls, then %d):\n%s", rig.state, n, rig.calls(), d.tc.err.String())
			}
			if body := d.readyz(t); !strings.Contains(body, `"channel:`+rig.channel+`":"`+rig.state+`"`) || !strings.Contains(body, `"ready":true`) {
				t.Errorf("/readyz after the refusal = %s", body)
			}
			st := d.bridgeStatus(t, rig.channel)
			if st.State != rig.state || st.Connected || !strings.Contains(st.LastError, rig.wantErr) ||
				st.ReconnectAttempts != 0 || st.RetryAt != 0 || st.Running != rig.awaitsRelink {
				t.Errorf("channels.status = %+v; want %s with an error containing %q, running %v, no restarts and none due",
					st, rig.state, rig.wantErr, rig.awaitsRelink)
			}

			d.stop(t)
			logs := d.tc.err.String()
			wantWarnings := 1
			if rig.awaitsRelink {
				wantWarnings = 0
			}
			if got := logRecords(logs, stopWarning, rig.channel); len(got) != wantWarnings {
				t.Errorf("%d %q warnings, want %d:\n%s", len(got), stopWarning, wantWarnings, logs)
			}
			// The gate reports the refusal once, with its error, as the
			// state changes; parking the bridge does not report it again.
			var reports, withErr int
			for _, r := range logRecords(logs, "bridge state", rig.channel) {
				if r["state"] == rig.state {
					reports++
					if r["level"] == "WARN" && r["err"] != nil {
						withErr++
					}
				}
			}
			if reports != 1 || withErr != 1 {
				t.Errorf("%s went %s in %d log lines (%d warnings with the error), want one:\n%s", rig.channel, rig.state, reports, withErr, logs)
			}
		})
	}
}

// logRecords returns the daemon's JSON log records whose message starts
// with msg and whose channel is channel.
func logRecords(logs, msg, channel string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if m, _ := rec["msg"].(string); strings.HasPrefix(m, msg) && rec["channel"] == channel {
			out = append(out, rec)
		}
	}
	return out
}

// bridgeStatus is one account of channels.status.
type bridgeStatus struct {
	State             string `json:"state"`
	Running           bool   `json:"running"`
	Connected         bool   `json:"connected"`
	LastError         string `json:"lastError"`
	ReconnectAttempts int    `json:"reconnectAttempts"`
	RetryAt           int64  `json:"retryAt"`
}

// bridgeStatus returns channels.status's one account of channel.
func (d *runningDaemon) bridgeStatus(t *testing.T, channel string) bridgeStatus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tok := newTestCLI(d.env)
	tok.run("gateway", "token", "--config", d.cfg)
	c, err := client.Dial(ctx, client.Options{URL: strings.Replace(d.base, "http", "ws", 1) + "/", Token: strings.TrimSpace(tok.out.String()),
		Scopes: []string{protocol.ScopeRead}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw, err := c.Call(ctx, "channels.status", nil)
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		ChannelAccounts map[string][]bridgeStatus `json:"channelAccounts"`
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		t.Fatal(err)
	}
	acc := status.ChannelAccounts[channel]
	if len(acc) != 1 {
		t.Fatalf("channels.status has %d %s accounts: %s", len(acc), channel, raw)
	}
	return acc[0]
}

// waitChannelWithin waits until /readyz reports the channel in state, for
// at most timeout.
func (d *runningDaemon) waitChannelWithin(t *testing.T, channel, state string, timeout time.Duration) {
	t.Helper()
	want := `"channel:` + channel + `":"` + state + `"`
	if !eventually(timeout, func() bool { return strings.Contains(d.readyz(t), want) }) {
		t.Fatalf("/readyz did not show %s within %v: %s\n%s", want, timeout, d.readyz(t), d.tc.err.String())
	}
}
