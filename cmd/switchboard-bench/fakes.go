package main

import (
	"fmt"
	"io"

	"github.com/switchboardhq/switchboard/bridges/discord/discordtest"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
	"github.com/switchboardhq/switchboard/internal/tb"
)

// platforms are the in-process fakes the child's bridges connect to.
type platforms struct {
	host     *tb.Host
	telegram *telegramtest.Server
	slack    *slacktest.Server
	discord  *discordtest.Server
}

func startPlatforms(log io.Writer) *platforms {
	h := &tb.Host{W: log}
	return &platforms{
		host:     h,
		telegram: telegramtest.New(h),
		slack:    slacktest.New(h),
		discord:  discordtest.New(h),
	}
}

func (p *platforms) close() { p.host.Close() }

// env is the child's environment: the platform tokens, nothing of ours.
func (p *platforms) env(stateDir string) []string {
	return []string{
		"SWITCHBOARD_STATE_DIR=" + stateDir,
		"TG_TOKEN=" + p.telegram.Token,
		"SLACK_BOT=" + p.slack.BotToken, "SLACK_APP=" + p.slack.AppToken,
		"DISCORD_TOKEN=" + p.discord.Token,
		"HOME=" + stateDir,
	}
}

// config is a configuration with the gateway on port (token auth) and the
// three bridges pointed at the fakes.
func (p *platforms) config(port int, token, modelYAML, extra string) string {
	return fmt.Sprintf(`gateway:
  port: %d
  auth: {mode: token, token: %q}
models:
  providers:
%sagents:
  defaults:
    model: {primary: %s}
channels:
  telegram:
    enabled: true
    botToken: ${TG_TOKEN}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
    groupPolicy: open
    pollTimeoutSeconds: 30
  slack:
    enabled: true
    botToken: ${SLACK_BOT}
    appToken: ${SLACK_APP}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
  discord:
    enabled: true
    token: ${DISCORD_TOKEN}
    apiUrl: %s
    dmPolicy: open
    allowFrom: ["*"]
    guilds:
      %q: {}
`, port, token, modelYAML, modelRef(modelYAML), p.telegram.URL, p.slack.APIURL, p.discord.APIURL, discordtest.DefaultGuildID) + extra
}

// echoModel is the built-in echo provider: no model server at all.
const echoModel = "    echo: {api: echo}\n"

func modelRef(modelYAML string) string {
	if modelYAML == echoModel {
		return "echo/echo"
	}
	return "fake/bench"
}
