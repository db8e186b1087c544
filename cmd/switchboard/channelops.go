package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/discord"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/telegram"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// logoutTimeout bounds channels.logout: telling the platform, then
// deleting the credentials.
const logoutTimeout = 45 * time.Second

// find returns the running bridge of channel and account ("default" when
// empty), or an UNAVAILABLE error saying how to run it.
func (bs *bridgeSet) find(channel, accountID string) (*runningBridge, error) {
	if accountID == "" {
		accountID = "default"
	}
	bs.mu.Lock()
	defer bs.mu.Unlock()
	for _, rb := range bs.running {
		if rb.bridge.Name() == channel && rb.bridge.AccountID() == accountID {
			return rb, nil
		}
	}
	return nil, protocol.NewError(protocol.CodeUnavailable, fmt.Sprintf(
		"no %s bridge for account %q runs in this daemon; set channels.%s.enabled: true and restart it", channel, accountID, channel))
}

// logout implements channels.logout: the running bridge of the channel
// logs its account out, when it can.
func (bs *bridgeSet) logout(ctx context.Context, channel, accountID string) error {
	rb, err := bs.find(channel, accountID)
	if err != nil {
		return err
	}
	lo, ok := rb.bridge.(bridges.Logouter)
	if !ok {
		return fmt.Errorf("the %s bridge has no logout: its credentials are in the configuration; remove them there", channel)
	}
	ctx, cancel := context.WithTimeout(ctx, logoutTimeout)
	defer cancel()
	return lo.Logout(ctx)
}

// loginFlow returns the running bridge of the request and its login flow.
func (bs *bridgeSet) loginFlow(req gateway.LoginRequest) (*runningBridge, bridges.LoginFlow, error) {
	rb, err := bs.find(req.Channel, req.AccountID)
	if err != nil {
		return nil, nil, err
	}
	flow, ok := rb.bridge.(bridges.LoginFlow)
	if !ok {
		return nil, nil, fmt.Errorf("the %s bridge is not linked by QR code: its credentials are in the configuration", req.Channel)
	}
	return rb, flow, nil
}

// loginStart implements web.login.start for a running bridge with a login
// flow. A linked account is left alone unless req.Force, which logs it
// out first.
func (bs *bridgeSet) loginStart(ctx context.Context, req gateway.LoginRequest) (gateway.LoginResult, error) {
	rb, flow, err := bs.loginFlow(req)
	if err != nil {
		return gateway.LoginResult{}, err
	}
	label := channelLabel(req.Channel)
	var note string
	if rb.linked != nil {
		account, linked, err := rb.linked(ctx)
		if err != nil {
			return gateway.LoginResult{}, err
		}
		if linked && !req.Force {
			return gateway.LoginResult{Message: alreadyLinked(label, account)}, nil
		}
		if linked {
			lo, ok := rb.bridge.(bridges.Logouter)
			if !ok {
				return gateway.LoginResult{}, fmt.Errorf("the %s bridge cannot log out, so it cannot relink", req.Channel)
			}
			lctx, cancel := context.WithTimeout(ctx, logoutTimeout)
			lerr := lo.Logout(lctx)
			cancel()
			if lerr != nil {
				// The local credentials may be gone all the same (the
				// platform was not reachable): then linking goes on.
				if _, still, err := rb.linked(ctx); err != nil || still {
					return gateway.LoginResult{}, fmt.Errorf("%s: logging %s out before relinking failed: %w", label, account, lerr)
				}
				note = lerr.Error() + "\n"
			}
		}
	}
	ch, err := flow.LoginStart(ctx, req.Phone)
	if errors.Is(err, whatsapp.ErrAlreadyLinked) {
		// Linked meanwhile (or the bridge cannot tell who by).
		return gateway.LoginResult{Message: label + " is already linked; use force to relink."}, nil
	}
	if err != nil {
		return gateway.LoginResult{}, err
	}
	res, err := challengeResult(ch)
	res.Message = note + res.Message
	return res, err
}

// loginWait implements web.login.wait: it waits for the linking
// loginStart began.
func (bs *bridgeSet) loginWait(ctx context.Context, req gateway.LoginRequest) (gateway.LoginResult, error) {
	_, flow, err := bs.loginFlow(req)
	if err != nil {
		return gateway.LoginResult{}, err
	}
	ch, err := flow.LoginWait(ctx)
	switch {
	case errors.Is(err, bridges.ErrLoginRefresh):
		res, err := challengeResult(ch)
		res.Message = "The QR code expired; scan this new one."
		return res, err
	case err != nil:
		return gateway.LoginResult{}, err
	case !ch.Linked:
		return gateway.LoginResult{}, fmt.Errorf("%s: linking ended without a linked account; start again", channelLabel(req.Channel))
	}
	return gateway.LoginResult{Connected: true, Account: ch.Account, Message: "Linked as " + ch.Account + "."}, nil
}

// challengeResult is what to show for a login challenge.
func challengeResult(ch bridges.LoginChallenge) (gateway.LoginResult, error) {
	if ch.PairingCode != "" {
		return gateway.LoginResult{PairingCode: ch.PairingCode, Message: pairingCodeHelp(ch.PairingCode)}, nil
	}
	url, err := whatsapp.QRDataURL(ch.QR)
	if err != nil {
		return gateway.LoginResult{}, err
	}
	return gateway.LoginResult{QR: ch.QR, QRDataURL: url, Message: scanHelp}, nil
}

// scanHelp says where a QR code is scanned.
const scanHelp = "Scan this QR code with WhatsApp on your phone: Settings → Linked devices → Link a device."

// pairingCodeHelp says where a pairing code is typed.
func pairingCodeHelp(code string) string {
	return "On your phone open WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead, and enter " + code + "."
}

// alreadyLinked is web.login.start's answer for a linked account.
func alreadyLinked(label, account string) string {
	return fmt.Sprintf("%s is already linked as %s; use force to relink (it logs %s out first).", label, account, account)
}

// channelLabel is a channel's name as people write it.
func channelLabel(channel string) string {
	switch channel {
	case whatsapp.Channel:
		return "WhatsApp"
	case telegram.Channel:
		return "Telegram"
	case slack.Channel:
		return "Slack"
	case discord.Channel:
		return "Discord"
	}
	return channel
}
