package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/discord/discordtest"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
)

// platforms are the in-process fakes the child's bridges connect to.
type platforms struct {
	host     *bridgetest.Host
	telegram *telegramtest.Server
	slack    *slacktest.Server
	discord  *discordtest.Server
	// slackPost, when set, delivers a Slack event over the Events API
	// (the cluster mode) instead of Socket Mode.
	slackPost func(payload any)
	stop      chan struct{}
	done      chan struct{}
}

// startPlatforms starts the fakes; onReply (nil for none) sees the text
// of every message the bot sends on any of them.
func startPlatforms(log io.Writer, onReply func(text string)) *platforms {
	h := &bridgetest.Host{W: log}
	var tg []telegramtest.Option
	var sl []slacktest.Option
	var dc []discordtest.Option
	if onReply != nil {
		tg = append(tg, telegramtest.WithOnSent(func(m telegramtest.SentMessage) { onReply(m.PlainText) }))
		sl = append(sl, slacktest.WithOnSent(func(m slacktest.SentMessage) {
			if m.Method == "chat.postMessage" {
				onReply(m.Text)
			}
		}))
		dc = append(dc, discordtest.WithOnSent(func(m discordtest.SentMessage) {
			if !m.Edit {
				onReply(m.Content)
			}
		}))
	}
	p := &platforms{
		host:     h,
		telegram: telegramtest.New(h, tg...),
		slack:    slacktest.New(h, sl...),
		discord:  discordtest.New(h, dc...),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	go p.retrySlack()
	return p
}

// Slack's retry policy for events: an envelope not acknowledged within
// slackAckTimeout is sent again at once, then after a minute, then after
// five (Slack's Events API schedule), and then no more.
const slackAckTimeout = 3 * time.Second

var slackRetryDelays = []time.Duration{0, time.Minute, 5 * time.Minute}

// retrySlack plays Slack's part the fake leaves to its caller: an event
// the bot did not acknowledge (it was killed after reading it, say) is
// delivered again, as a new envelope with retry_attempt one higher.
func (p *platforms) retrySlack() {
	defer close(p.done)
	firstSeen := map[string]time.Time{}
	retried := map[string]bool{}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case now := <-tick.C:
			for _, e := range p.slack.Envelopes() {
				if e.Type != "events_api" || e.Acked || retried[e.ID] || e.RetryAttempt >= len(slackRetryDelays) {
					continue
				}
				seen, ok := firstSeen[e.ID]
				if !ok {
					firstSeen[e.ID] = now
					continue
				}
				if now.Sub(seen) >= slackAckTimeout+slackRetryDelays[e.RetryAttempt] {
					retried[e.ID] = true
					p.slack.Redeliver(e.ID, "timeout")
				}
			}
		}
	}
}

// platformNames are the platforms the load modes can send on.
var platformNames = []string{"telegram", "slack", "discord"}

// sender returns the function that sends session i's messages on
// platform: a DM, or with group a message in a group chat that mentions
// the bot.
func (p *platforms) sender(platform string, i int, group bool) func(text string) {
	id := 100000 + i
	switch platform {
	case "slack":
		user := fmt.Sprintf("U%d", id)
		push := func(payload any) { p.slack.PushEvent(payload) }
		if p.slackPost != nil {
			push = p.slackPost
		}
		if group {
			// Slack sends a mention twice: as a message event and as an
			// app_mention event, which the bridge answers.
			ch, mention := fmt.Sprintf("C%d", id), "<@"+p.slack.Identity.BotUserID+"> "
			return func(text string) {
				push(p.slack.Message(ch, user, mention+text))
				push(p.slack.AppMention(ch, user, mention+text))
			}
		}
		ch := fmt.Sprintf("D%d", id)
		return func(text string) { push(p.slack.Message(ch, user, text)) }
	case "discord":
		user := discordtest.User{ID: fmt.Sprintf("%d", 1200000000000000000+id), Username: fmt.Sprintf("user%d", i)}
		if group {
			ch, mention := fmt.Sprintf("%d", 1300000000000000000+id), "<@"+p.discord.BotUser.ID+"> "
			return func(text string) { p.discord.PushMessageCreate(p.discord.GuildMessage(ch, user, mention+text)) }
		}
		return func(text string) { p.discord.PushMessageCreate(p.discord.DirectMessage(user, text)) }
	default:
		user := telegramtest.User{ID: int64(id), FirstName: "User" + strconv.Itoa(i)}
		if group {
			return func(text string) {
				p.telegram.PushUpdate(p.telegram.TextMessage(-int64(id), telegramtest.ChatSupergroup, user, "@switchboard_bot "+text))
			}
		}
		return func(text string) {
			p.telegram.PushUpdate(p.telegram.TextMessage(int64(id), telegramtest.ChatPrivate, user, text))
		}
	}
}

// forgetStoppedChild waits until the fakes have seen a stopped child's
// connections end, then makes Discord forget its session: the child keeps
// it resumable when it stops, and a later child on another state
// directory identifies afresh, so events the fake kept sending to the old
// session would never arrive. Telegram keeps updates until an offset
// confirms them and Slack retries unacknowledged envelopes, so neither
// needs more. Polls every few milliseconds until limit.
func (p *platforms) forgetStoppedChild(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for p.discord.Sessions() > 0 || p.slack.OpenConnections() > 0 || p.telegram.LongPolls() > 0 {
		if time.Now().After(deadline) {
			return fmt.Errorf("the fakes still saw a stopped switchboard's connections after %v (discord sessions %d, slack sockets %d, telegram polls %d)",
				limit, p.discord.Sessions(), p.slack.OpenConnections(), p.telegram.LongPolls())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	p.discord.ExpireDetachedSessions()
	return nil
}

func (p *platforms) close() {
	close(p.stop)
	<-p.done
	p.host.Close()
}

// env is the child's environment: the platform tokens, nothing of ours.
func (p *platforms) env(stateDir string) []string {
	return []string{
		"SWITCHBOARD_STATE_DIR=" + stateDir,
		"TG_TOKEN=" + p.telegram.Token,
		"SLACK_BOT=" + p.slack.BotToken, "SLACK_APP=" + p.slack.AppToken,
		"DISCORD_TOKEN=" + p.discord.Token,
		"HOME=" + stateDir,
		"SWITCHBOARD_CPUPROFILE=" + os.Getenv("SWITCHBOARD_CPUPROFILE"),
	}
}

// config is a configuration with the gateway on port (token auth) and the
// three bridges pointed at the fakes.
func (p *platforms) config(port int, token string, spec rigSpec) string {
	return fmt.Sprintf(`gateway:
  port: %d
  auth: {mode: token, token: %q}
  limits: {maxConnectionsPerAddress: 1000000} # -conns clients, all from loopback
models:
  providers:
%sagents:
  defaults:
    model: {primary: %s}
%schannels:
%s  slack:
    enabled: true
    botToken: ${SLACK_BOT}
    appToken: ${SLACK_APP}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
    groupPolicy: open
%s  whatsapp:
    enabled: true
    dmPolicy: open
    allowFrom: ["*"]
`, port, token, spec.modelYAML, modelRef(spec.modelYAML), spec.agentDefaults, p.telegramYAML(), p.slack.APIURL, p.discordYAML()) + spec.extra
}

// telegramYAML is channels.telegram (long polling) against the fake, open
// to everyone.
func (p *platforms) telegramYAML() string {
	return fmt.Sprintf(`  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
    groupPolicy: open
    pollTimeoutSeconds: 30
`, p.telegram.URL)
}

// discordYAML is channels.discord against the fake, open to everyone in
// its guild.
func (p *platforms) discordYAML() string {
	return fmt.Sprintf(`  discord:
    enabled: true
    token: ${DISCORD_TOKEN}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
    guilds:
      %q: {}
`, p.discord.APIURL, discordtest.DefaultGuildID)
}

// echoModel is the built-in echo provider: no model server at all.
const echoModel = "    echo: {api: echo}\n"

func modelRef(modelYAML string) string {
	if modelYAML == echoModel {
		return "echo/echo"
	}
	return "fake/bench"
}

// metrics reads the Go runtime's gauges from the child's /metrics:
// goroutines and the longest GC pause.
func readMetrics(base string) (goroutines int, maxPauseMs float64) {
	cl := &http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get(base + "/metrics")
	if err != nil {
		return -1, -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	goroutines, maxPauseMs = -1, -1
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "go_goroutines":
			goroutines = int(v)
		case `go_gc_duration_seconds{quantile="1"}`:
			maxPauseMs = v * 1000
		}
	}
	return goroutines, maxPauseMs
}
