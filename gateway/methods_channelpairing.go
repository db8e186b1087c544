package gateway

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/store"
)

// channelPairingPendingPerAccount is how many codes a bot account keeps
// pending at once (channels.MaxPendingPairingCodes).
const channelPairingPendingPerAccount = 3

// mChannelsPairingList answers OpenClaw 2026.9.6's channels.pairing.list
// {channel?, accountId?}: the bridge accounts, the senders waiting for DM
// pairing as requests (the request id is the pairing code), and the
// limits. It is pairing.list in the shape OpenClaw's Control UI reads.
func (s *Server) mChannelsPairingList(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Channel   *string `json:"channel"`
		AccountID *string `json:"accountId"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	channel, account := "", ""
	if p.Channel != nil {
		if channel = strings.ToLower(strings.TrimSpace(*p.Channel)); channel == "" {
			return nil, invalidParams(req.Method, "channel, when given, must not be empty")
		}
	}
	if p.AccountID != nil {
		if account = *p.AccountID; account == "" {
			return nil, invalidParams(req.Method, "accountId, when given, must not be empty")
		}
	}
	b := s.backend.Load()
	labels := map[string]string{}
	accounts := []map[string]any{}
	if b.Channels != nil {
		for _, ch := range b.Channels() {
			labels[ch.Channel] = ch.Label
			if (channel != "" && ch.Channel != channel) || (account != "" && ch.AccountID != account) {
				continue
			}
			accounts = append(accounts, map[string]any{
				"channel": ch.Channel, "channelLabel": labelOr(ch.Label, ch.Channel), "accountId": ch.AccountID, "notifySupported": false,
			})
		}
	}
	codes, err := b.Store.ListChannelPairingCodes(ctx, channel, s.now().Add(-channelPairingTTL).UnixMilli())
	if err != nil {
		return nil, errorShape(err)
	}
	requests := []map[string]any{}
	for _, c := range codes {
		if account != "" && c.AccountID != account {
			continue
		}
		created := time.UnixMilli(c.CreatedAt).UTC().Format(time.RFC3339Nano)
		requests = append(requests, map[string]any{
			"requestId": c.Code, "channel": c.Channel, "channelLabel": labelOr(labels[c.Channel], c.Channel),
			"accountId": c.AccountID, "senderId": c.SenderID, "senderLabel": labelOr(c.SenderName, c.SenderID),
			"createdAt": created, "lastSeenAt": created,
			"expiresAt":       time.UnixMilli(c.CreatedAt).Add(channelPairingTTL).UTC().Format(time.RFC3339Nano),
			"notifySupported": false,
		})
	}
	return map[string]any{
		"accounts": accounts, "requests": requests, "commandOwnerConfigured": b.CommandOwnerConfigured,
		"limits": map[string]any{"pendingPerAccount": channelPairingPendingPerAccount, "ttlMs": channelPairingTTL.Milliseconds()},
	}, nil
}

// mChannelsPairingDecide answers channels.pairing.approve {channel,
// accountId, requestId, notify?, bootstrapCommandOwner?} and
// channels.pairing.dismiss {channel, accountId, requestId}. The sender is
// not sent a message either way (notification "unsupported" when asked),
// and the command owner is configuration (commands.ownerAllowFrom), so
// bootstrapCommandOwner is answered "unavailable".
func (s *Server) mChannelsPairingDecide(approve bool) handler {
	return func(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
		var p struct {
			Channel               string `json:"channel"`
			AccountID             string `json:"accountId"`
			RequestID             string `json:"requestId"`
			Notify                *bool  `json:"notify"`
			BootstrapCommandOwner *bool  `json:"bootstrapCommandOwner"`
		}
		if e := decodeParams(req, &p); e != nil {
			return nil, e
		}
		if !approve && (p.Notify != nil || p.BootstrapCommandOwner != nil) {
			return nil, invalidParams(req.Method, "notify and bootstrapCommandOwner are channels.pairing.approve's")
		}
		channel, code := strings.ToLower(strings.TrimSpace(p.Channel)), strings.ToUpper(strings.TrimSpace(p.RequestID))
		if channel == "" || p.AccountID == "" || code == "" {
			return nil, invalidParams(req.Method, "channel, accountId and requestId are required (channels.pairing.list has them)")
		}
		st := s.backend.Load().Store
		codes, err := st.ListChannelPairingCodes(ctx, channel, s.now().Add(-channelPairingTTL).UnixMilli())
		if err != nil {
			return nil, errorShape(err)
		}
		var pending *store.ChannelPairingCode
		for i := range codes {
			if codes[i].Code == code && codes[i].AccountID == p.AccountID {
				pending = &codes[i]
			}
		}
		if pending == nil {
			return nil, protocol.InvalidRequest(fmt.Sprintf("unknown pairing request %s for %s account %s (requests expire after an hour; list them with channels.pairing.list)", code, channel, p.AccountID), nil)
		}
		if !approve {
			if err := st.RejectChannelPairingCode(ctx, channel, code); err != nil {
				return nil, pairingError(err, channel, code)
			}
			c.log.Info("dm pairing rejected", "channel", channel)
			return map[string]any{"requestId": code, "senderId": pending.SenderID}, nil
		}
		sender, err := st.ApproveChannelPairingCode(ctx, channel, code, s.now().Add(-channelPairingTTL).UnixMilli(), s.now().UnixMilli())
		if err != nil {
			return nil, pairingError(err, channel, code)
		}
		c.log.Info("dm pairing approved", "channel", channel, "sender", sender.SenderID)
		notification, owner := "not-requested", "not-requested"
		if p.Notify != nil && *p.Notify {
			notification = "unsupported"
		}
		if p.BootstrapCommandOwner != nil && *p.BootstrapCommandOwner {
			owner = "unavailable"
		}
		return map[string]any{"requestId": code, "senderId": sender.SenderID, "notification": notification, "commandOwnerBootstrap": owner}, nil
	}
}

func labelOr(label, fallback string) string {
	if label != "" {
		return label
	}
	return fallback
}
