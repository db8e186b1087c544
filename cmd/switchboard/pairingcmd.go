package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/internal/suggest"

	"github.com/switchboardhq/switchboard/channels"

	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/store"
)

func pairingListCommand() *command {
	return &command{
		name:    "pairing list",
		args:    "[channel]",
		summary: "list chat senders waiting for DM approval, and those approved",
		help: `Lists the pairing codes that unknown senders got in a direct message (under
dmPolicy "pairing"), with the channel, sender and expiry, and the senders
approved so far. Give a channel (telegram, slack, discord, whatsapp) to list
only its own. It asks the running daemon over the gateway; when no daemon
runs, it reads the state store directly.`,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 1 {
				fmt.Fprintf(c.stderr, "switchboard pairing list: takes at most one argument, the channel\n")
				return exitUsage
			}
			channel := ""
			if len(args) == 1 {
				var ok bool
				if channel, ok = c.channelArg("pairing list", args[0]); !ok {
					return exitUsage
				}
			}
			return c.pairing(ctx, g, func(ctx context.Context, p pairingOps) error {
				pending, approved, err := p.list(ctx, channel)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "Pending pairing codes: %d\n", len(pending))
				for _, x := range pending {
					fmt.Fprintf(c.stdout, "  %s  %s  sender %s %s  expires %s\n", x.Channel, x.Code, x.SenderID, quoteName(x.SenderName),
						time.UnixMilli(x.CreatedAt).Add(channels.PairingTTL).Format(time.RFC3339))
				}
				fmt.Fprintf(c.stdout, "Approved senders: %d\n", len(approved))
				for _, x := range approved {
					fmt.Fprintf(c.stdout, "  %s  sender %s %s  account %s\n", x.Channel, x.SenderID, quoteName(x.SenderName), x.AccountID)
				}
				return nil
			})
		},
	}
}

func pairingDecideCommand(approve bool) *command {
	verb, done := "approve", "Approved"
	summary := "let the sender of a DM pairing code talk to the bot"
	if !approve {
		verb, done, summary = "reject", "Rejected", "discard a DM pairing code"
	}
	return &command{
		name:    "pairing " + verb,
		args:    "<channel> <code>",
		summary: summary,
		help: `Decides a pairing code an unknown sender got in a direct message (their
message tells them to send it to you). An approved sender can talk to the bot
from then on, on that channel; codes expire after an hour. It asks the running
daemon over the gateway; when no daemon runs, it changes the state store
directly.`,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) != 2 || args[0] == "" || args[1] == "" {
				fmt.Fprintf(c.stderr, "switchboard pairing %s: takes two arguments, the channel and the code (e.g. telegram ABCD2345)\n", verb)
				return exitUsage
			}
			channel, ok := c.channelArg("pairing "+verb, args[0])
			if !ok {
				return exitUsage
			}
			code := strings.ToUpper(args[1])
			return c.pairing(ctx, g, func(ctx context.Context, p pairingOps) error {
				who, err := p.decide(ctx, approve, channel, code)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.stdout, "%s pairing code %s on %s%s\n", done, code, channel, who)
				return nil
			})
		},
	}
}

// channelArg checks a channel name given on the command line against the
// bridges this binary carries, case aside, and returns it in lower case.
// An unknown one is reported on stderr with the closest name and the list
// (issue 26, finding 10: "pairing approve telgram" went unnoticed).
func (c *cli) channelArg(cmd, arg string) (string, bool) {
	channel := strings.ToLower(arg)
	names := c.registry().Channels()
	if slices.Contains(names, channel) {
		return channel, true
	}
	hint := ""
	if s := suggest.Closest(channel, names); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	}
	fmt.Fprintf(c.stderr, "switchboard %s: %q is not a channel%s; write one of %s\n", cmd, arg, hint, strings.Join(names, ", "))
	return "", false
}

func quoteName(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf("(%s)", s)
}

// pairingOps reaches the DM pairing state: through the daemon, or the store.
type pairingOps interface {
	list(ctx context.Context, channel string) ([]store.ChannelPairingCode, []store.ChannelSender, error)
	decide(ctx context.Context, approve bool, channel, code string) (who string, err error)
}

func (c *cli) pairing(ctx context.Context, g *globalFlags, fn func(context.Context, pairingOps) error) int {
	cfg, _, stateDir, code := c.loadConfigAndState(g.config, config.ForManagement)
	if cfg == nil {
		return code
	}
	ctx, cancel := context.WithTimeout(ctx, devicesTimeout)
	defer cancel()
	cl, st, err := reachDaemon(ctx, cfg, stateDir)
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard pairing: %v\n", err)
		return exitFailure
	}
	var ops pairingOps
	if cl != nil {
		defer cl.Close()
		ops = gatewayPairing{cl}
	} else {
		defer st.Close()
		ops = storePairing{st}
	}
	if err := fn(ctx, ops); err != nil {
		fmt.Fprintf(c.stderr, "switchboard pairing: %s\n", cliError(err))
		return exitFailure
	}
	return exitOK
}

type gatewayPairing struct{ c *client.Client }

func (g gatewayPairing) list(ctx context.Context, channel string) ([]store.ChannelPairingCode, []store.ChannelSender, error) {
	raw, err := g.c.Call(ctx, "pairing.list", map[string]string{"channel": channel})
	if err != nil {
		return nil, nil, err
	}
	var out struct {
		Pending []struct {
			Channel, AccountID, Code, SenderID, SenderName string
			CreatedAtMs                                    int64
		}
		Approved []struct {
			Channel, AccountID, SenderID, SenderName string
			ApprovedAtMs                             int64
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, nil, err
	}
	var pending []store.ChannelPairingCode
	for _, p := range out.Pending {
		pending = append(pending, store.ChannelPairingCode{Channel: p.Channel, AccountID: p.AccountID, Code: p.Code, SenderID: p.SenderID, SenderName: p.SenderName, CreatedAt: p.CreatedAtMs})
	}
	var approved []store.ChannelSender
	for _, a := range out.Approved {
		approved = append(approved, store.ChannelSender{Channel: a.Channel, AccountID: a.AccountID, SenderID: a.SenderID, SenderName: a.SenderName, ApprovedAt: a.ApprovedAtMs})
	}
	return pending, approved, nil
}

func (g gatewayPairing) decide(ctx context.Context, approve bool, channel, code string) (string, error) {
	method := "pairing.reject"
	if approve {
		method = "pairing.approve"
	}
	raw, err := g.c.Call(ctx, method, map[string]string{"channel": channel, "code": code})
	if err != nil {
		return "", err
	}
	var out struct {
		Approved struct{ SenderID, SenderName string }
	}
	_ = json.Unmarshal(raw, &out)
	if out.Approved.SenderID == "" {
		return "", nil
	}
	return fmt.Sprintf(": sender %s %s", out.Approved.SenderID, quoteName(out.Approved.SenderName)), nil
}

type storePairing struct{ st store.Full }

func (s storePairing) list(ctx context.Context, channel string) ([]store.ChannelPairingCode, []store.ChannelSender, error) {
	pending, err := s.st.ListChannelPairingCodes(ctx, channel, time.Now().Add(-channels.PairingTTL).UnixMilli())
	if err != nil {
		return nil, nil, err
	}
	approved, err := s.st.ListChannelSenders(ctx, channel)
	return pending, approved, err
}

func (s storePairing) decide(ctx context.Context, approve bool, channel, code string) (string, error) {
	if !approve {
		return "", s.st.RejectChannelPairingCode(ctx, channel, code)
	}
	sender, err := s.st.ApproveChannelPairingCode(ctx, channel, code, time.Now().Add(-channels.PairingTTL).UnixMilli(), 0)
	if errors.Is(err, store.ErrUnknownPairingCode) {
		return "", fmt.Errorf("unknown pairing code %s on %s (codes expire after an hour; see switchboard pairing list)", code, channel)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf(": sender %s %s", sender.SenderID, quoteName(sender.SenderName)), nil
}
