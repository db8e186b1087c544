package gateway

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/store"
)

// channelPairingTTL is how long a chat platform's DM pairing code can be
// approved (channels.PairingTTL; the gateway does not import channels).
const channelPairingTTL = time.Hour

func channelCodeView(c store.ChannelPairingCode) map[string]any {
	return map[string]any{
		"channel": c.Channel, "accountId": c.AccountID, "code": c.Code, "senderId": c.SenderID,
		"senderName": c.SenderName, "createdAtMs": c.CreatedAt, "expiresAtMs": c.CreatedAt + channelPairingTTL.Milliseconds(),
	}
}

func channelSenderView(c store.ChannelSender) map[string]any {
	return map[string]any{
		"channel": c.Channel, "accountId": c.AccountID, "senderId": c.SenderID, "senderName": c.SenderName, "approvedAtMs": c.ApprovedAt,
	}
}

// mPairingList lists chat platforms' pending DM pairing codes and the
// senders approved so far: {pending, approved}.
func (s *Server) mPairingList(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Channel string `json:"channel"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	st := s.backend.Load().Store
	codes, err := st.ListChannelPairingCodes(ctx, strings.ToLower(p.Channel), s.now().Add(-channelPairingTTL).UnixMilli())
	if err != nil {
		return nil, errorShape(err)
	}
	senders, err := st.ListChannelSenders(ctx, strings.ToLower(p.Channel))
	if err != nil {
		return nil, errorShape(err)
	}
	pending := make([]map[string]any, 0, len(codes))
	for _, c := range codes {
		pending = append(pending, channelCodeView(c))
	}
	approved := make([]map[string]any, 0, len(senders))
	for _, c := range senders {
		approved = append(approved, channelSenderView(c))
	}
	return map[string]any{"pending": pending, "approved": approved}, nil
}

// mPairingDecide approves or rejects a DM pairing code: {channel, code}.
func (s *Server) mPairingDecide(approve bool) handler {
	return func(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
		var p struct {
			Channel string `json:"channel"`
			Code    string `json:"code"`
		}
		if e := decodeParams(req, &p); e != nil {
			return nil, e
		}
		channel, code := strings.ToLower(strings.TrimSpace(p.Channel)), strings.ToUpper(strings.TrimSpace(p.Code))
		if channel == "" || code == "" {
			return nil, invalidParams(req.Method, "channel and code are required (the code is in the message the sender got)")
		}
		st := s.backend.Load().Store
		if !approve {
			if err := st.RejectChannelPairingCode(ctx, channel, code); err != nil {
				return nil, pairingError(err, channel, code)
			}
			c.log.Info("dm pairing rejected", "channel", channel)
			return map[string]any{"ok": true, "channel": channel, "code": code}, nil
		}
		sender, err := st.ApproveChannelPairingCode(ctx, channel, code, s.now().Add(-channelPairingTTL).UnixMilli(), s.now().UnixMilli())
		if err != nil {
			return nil, pairingError(err, channel, code)
		}
		c.log.Info("dm pairing approved", "channel", channel, "sender", sender.SenderID)
		return map[string]any{"ok": true, "approved": channelSenderView(sender)}, nil
	}
}

func pairingError(err error, channel, code string) *protocol.ErrorShape {
	if errors.Is(err, store.ErrUnknownPairingCode) {
		return protocol.InvalidRequest("unknown pairing code "+code+" on "+channel+" (codes expire after an hour; list them with pairing.list)", nil)
	}
	return errorShape(err)
}
