package gateway

import (
	"context"
	"encoding/json"

	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/heartbeat"
)

// heartbeatOff answers the heartbeat methods when no runner is attached.
var heartbeatOff = protocol.NewError(protocol.CodeUnavailable, "heartbeats are not running (agents.defaults.heartbeat.every is 0m or the scheduler is not wired)")

// mLastHeartbeat returns the latest heartbeat event, or null before the
// first.
func (s *Server) mLastHeartbeat(context.Context, *conn, protocol.RequestFrame) (any, *protocol.ErrorShape) {
	hb := s.backend.Load().Heartbeat
	if hb == nil {
		return nil, heartbeatOff
	}
	if ev, ok := hb.Last(); ok {
		return ev, nil
	}
	return json.RawMessage("null"), nil
}

// mSetHeartbeats switches the scheduled heartbeats on or off.
func (s *Server) mSetHeartbeats(ctx context.Context, _ *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape) {
	var p struct {
		Enabled *bool `json:"enabled"`
	}
	if e := decodeParams(req, &p); e != nil {
		return nil, e
	}
	if p.Enabled == nil {
		return nil, invalidParams(req.Method, "enabled (true or false) is required")
	}
	hb := s.backend.Load().Heartbeat
	if hb == nil {
		return nil, heartbeatOff
	}
	if err := hb.SetEnabled(ctx, *p.Enabled); err != nil {
		return nil, errorShape(err)
	}
	return map[string]any{"ok": true, "enabled": hb.Enabled()}, nil
}

// PublishHeartbeat broadcasts a heartbeat event to clients with read
// scope. Wire it to heartbeat.Deps.OnEvent.
func (s *Server) PublishHeartbeat(ev heartbeat.Event) { s.publish("heartbeat", ev) }

// PublishCron broadcasts a cron event (a job added, updated or removed, a
// run started, finished or skipped). Wire it to heartbeat.CronDeps.OnEvent.
func (s *Server) PublishCron(ev heartbeat.CronEvent) { s.publish("cron", ev) }

// publish broadcasts one droppable event.
func (s *Server) publish(name string, payload any) { s.publishEvent(name, payload, true) }

// publishEvent broadcasts one event to the clients protocol.EventAllowed
// lets see it.
func (s *Server) publishEvent(name string, payload any, dropIfSlow bool) {
	b, err := json.Marshal(payload)
	if err != nil {
		s.log.Error("event payload not encodable", "event", name, "err", err)
		return
	}
	s.hub.broadcast(outEvent{name: name, payload: func(int) []byte { return b }, dropIfSlow: dropIfSlow})
}
