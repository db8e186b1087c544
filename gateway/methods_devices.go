package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/store"
)

// pairingTTL is how long a pairing request waits for an operator.
const pairingTTLMs = 60 * 60 * 1000

// pairingRequestView is a pending request as operators see it (never a
// token).
func pairingRequestView(r store.PairingRequest, reason string) map[string]any {
	v := map[string]any{
		"requestId": r.RequestID, "deviceId": r.Device.ID, "publicKey": r.Device.PublicKey,
		"role": r.Device.Role, "scopes": nonNil(r.Device.Scopes), "clientId": r.Device.ClientID,
		"clientMode": r.Device.ClientMode, "platform": r.Device.Platform, "deviceFamily": r.Device.DeviceFamily,
		"displayName": r.Device.DisplayName, "remoteIp": r.IP, "ts": r.CreatedAt, "isRepair": reason != "" && reason != protocol.PairingReasonNotPaired,
	}
	if reason != "" {
		v["reason"] = reason
	}
	return v
}

func deviceView(d store.Device) map[string]any {
	return map[string]any{
		"deviceId": d.ID, "publicKey": d.PublicKey, "role": d.Role, "roles": []string{d.Role}, "scopes": nonNil(d.Scopes),
		"clientId": d.ClientID, "clientMode": d.ClientMode, "platform": d.Platform, "deviceFamily": d.DeviceFamily,
		"displayName": d.DisplayName, "approvedAtMs": d.PairedAt, "lastSeenAtMs": d.LastSeenAt, "remote": d.Remote,
	}
}

// broadcastPairing announces a pairing event to operators with the pairing
// scope (protocol.EventAllowed guards device.pair.*).
func (s *Server) broadcastPairing(name string, payload map[string]any) {
	b, _ := json.Marshal(payload)
	s.hub.broadcast(outEvent{name: name, payload: func(int) []byte { return b }, dropIfSlow: true})
}

func (s *Server) mDevicePairList(ctx context.Context, _ *conn, _ protocol.RequestFrame) (any, *protocol.ErrorShape) {
	st := s.backend.Load().Store
	if _, err := st.PrunePairingRequests(ctx, s.now().UnixMilli()-pairingTTLMs); err != nil {
		return nil, errorShape(err)
	}
	reqs, err := st.ListPairingRequests(ctx)
	if err != nil {
		return nil, errorShape(err)
	}
	devs, err := st.ListDevices(ctx)
	if err != nil {
		return nil, errorShape(err)
	}
	pending := make([]map[string]any, 0, len(reqs))
	for _, r := range reqs {
		pending = append(pending, pairingRequestView(r, ""))
	}
	paired := make([]map[string]any, 0, len(devs))
	for _, d := range devs {
		paired = append(paired, deviceView(d))
	}
	return map[string]any{"pending": pending, "paired": paired}, nil
}

// findRequest returns a pending request by id.
func findRequest(ctx context.Context, st Store, id string) (store.PairingRequest, *protocol.ErrorShape) {
	reqs, err := st.ListPairingRequests(ctx)
	if err != nil {
		return store.PairingRequest{}, errorShape(err)
	}
	for _, r := range reqs {
		if r.RequestID == id {
			return r, nil
		}
	}
	return store.PairingRequest{}, protocol.InvalidRequest("unknown pairing request "+id+" (it may have expired or been handled; list them with device.pair.list)", nil)
}

// grantable checks that the caller holds every scope it would hand out
// (reliability-security lesson 3: approving must not escalate).
func grantable(c *conn, scopes []string) *protocol.ErrorShape {
	var missing []string
	for _, sc := range scopes {
		if !covers(c.scopes, sc) {
			missing = append(missing, sc)
		}
	}
	if len(missing) > 0 {
		return protocol.InvalidRequest("cannot grant scopes you do not hold: "+strings.Join(missing, ", "), map[string]any{"missingScopes": missing})
	}
	return nil
}

func (s *Server) mDevicePairApprove(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		RequestID string   `json:"requestId"`
		Scopes    []string `json:"scopes"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.RequestID == "" {
		return nil, invalidParams(req.Method, "requestId is required")
	}
	st := s.backend.Load().Store
	r, e := findRequest(ctx, st, p.RequestID)
	if e != nil {
		return nil, e
	}
	scopes := r.Device.Scopes
	if p.Scopes != nil {
		for _, sc := range p.Scopes {
			if !covers(r.Device.Scopes, sc) {
				return nil, invalidParams(req.Method, fmt.Sprintf("scope %s was not requested by the device", sc))
			}
		}
		scopes = p.Scopes
	}
	if e := grantable(c, scopes); e != nil {
		return nil, e
	}
	dev, err := st.ApprovePairing(ctx, p.RequestID, scopes, s.now().UnixMilli())
	if err != nil {
		if errors.Is(err, store.ErrUnknownPairingRequest) {
			return nil, protocol.InvalidRequest("unknown pairing request "+p.RequestID, nil)
		}
		return nil, errorShape(err)
	}
	s.broadcastPairing("device.pair.resolved", map[string]any{"requestId": p.RequestID, "deviceId": dev.ID, "decision": "approved", "ts": s.now().UnixMilli()})
	c.log.Info("device pairing approved", "request", p.RequestID, "device", dev.ID)
	return map[string]any{"requestId": p.RequestID, "device": deviceView(dev)}, nil
}

func (s *Server) mDevicePairReject(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		RequestID string `json:"requestId"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.RequestID == "" {
		return nil, invalidParams(req.Method, "requestId is required")
	}
	st := s.backend.Load().Store
	r, e := findRequest(ctx, st, p.RequestID)
	if e != nil {
		return nil, e
	}
	if err := st.RejectPairing(ctx, p.RequestID); err != nil {
		return nil, errorShape(err)
	}
	s.broadcastPairing("device.pair.resolved", map[string]any{"requestId": p.RequestID, "deviceId": r.Device.ID, "decision": "rejected", "ts": s.now().UnixMilli()})
	c.log.Info("device pairing rejected", "request", p.RequestID, "device", r.Device.ID)
	return map[string]any{"requestId": p.RequestID, "deviceId": r.Device.ID}, nil
}

// pairedDevice returns a paired device the caller may manage: one whose
// scopes it holds itself.
func pairedDevice(ctx context.Context, c *conn, st Store, id string) (store.Device, *protocol.ErrorShape) {
	if id == "" {
		return store.Device{}, protocol.InvalidRequest("deviceId is required", nil)
	}
	dev, ok, err := st.GetDevice(ctx, id)
	if err != nil {
		return store.Device{}, errorShape(err)
	}
	if !ok {
		return store.Device{}, protocol.InvalidRequest("unknown device "+id, nil)
	}
	if id != c.deviceID {
		if e := grantable(c, dev.Scopes); e != nil {
			return store.Device{}, e
		}
	}
	return dev, nil
}

func (s *Server) mDeviceTokenRotate(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		DeviceID string   `json:"deviceId"`
		Role     string   `json:"role"`
		Scopes   []string `json:"scopes"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	st := s.backend.Load().Store
	dev, e := pairedDevice(ctx, c, st, p.DeviceID)
	if e != nil {
		return nil, e
	}
	if p.Role != "" && p.Role != dev.Role {
		return nil, protocol.InvalidRequest("role "+p.Role+" was not granted to this device; re-pair it to change its role", nil)
	}
	now := s.now().UnixMilli()
	tok, err := st.RotateDeviceToken(ctx, dev.ID, now)
	if err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"deviceId": dev.ID, "role": dev.Role, "token": tok, "scopes": nonNil(dev.Scopes), "rotatedAtMs": now}, nil
}

func (s *Server) mDeviceTokenRevoke(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		DeviceID string `json:"deviceId"`
		Role     string `json:"role"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	st := s.backend.Load().Store
	dev, e := pairedDevice(ctx, c, st, p.DeviceID)
	if e != nil {
		return nil, e
	}
	n, err := st.RevokeDeviceTokens(ctx, dev.ID)
	if err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"deviceId": dev.ID, "role": dev.Role, "revoked": n, "revokedAtMs": s.now().UnixMilli()}, nil
}
