package main

import (
	"errors"
	"regexp"
	"strings"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// invalidParamsPrefix is how the gateway opens a refusal of a request's
// params ("invalid cron.add params: "); a command's user never wrote params.
var invalidParamsPrefix = regexp.MustCompile(`^invalid [a-z][a-zA-Z.]* params: `)

// cliWords rewrites the gateway's words for the command line: method
// names become the commands that call them, and cron.add's member names
// the flags that set them (issue 26, finding 10: errors pointed command-line
// users at gateway method names).
var cliWords = strings.NewReplacer(
	"device.pair.list", "switchboard devices list",
	"device.pair.approve", "switchboard devices approve",
	"device.pair.reject", "switchboard devices reject",
	"pairing.list", "switchboard pairing list",
	"pairing.approve", "switchboard pairing approve",
	"pairing.reject", "switchboard pairing reject",
	"cron.list", "switchboard cron list",
	"cron.add", "switchboard cron add",
	"cron.remove", "switchboard cron rm",
	"cron.runs", "switchboard cron runs",
	"cron.run", "switchboard cron run",
	"sessionTarget: main", "--session main",
	"set sessionTarget: main", "use --system-event",
	"sessionTarget", "--session",
	"a systemEvent payload", "--system-event",
	"an agentTurn", "--message",
	"payload.kind", "--message/--system-event",
	"payload.message", "--message",
	"payload.text", "--system-event",
	"schedule.tz", "--tz",
	"schedule.expr", "--cron",
	"schedule.everyMs", "--every",
	"schedule.at", "--at",
	"delivery.to", "--announce",
	"delivery.channel", "--announce",
)

// cliError returns err as a command's user should read it: a gateway's
// error answer by its message alone (its code adds nothing for a person),
// without the params prefix, in the command line's words.
func cliError(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var es *protocol.ErrorShape
	if errors.As(err, &es) {
		msg = es.Message
	}
	return cliWords.Replace(invalidParamsPrefix.ReplaceAllString(msg, ""))
}
