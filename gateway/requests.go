package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/switchboardhq/switchboard/core/agent"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// handler answers one request. It returns the payload or an error, or
// later (respondLater) when it answers asynchronously itself.
type handler func(ctx context.Context, c *conn, req protocol.RequestFrame) (any, *protocol.ErrorShape)

// later is the payload of a handler that answers by itself.
type laterPayload struct{}

// respondLater tells the read loop that the handler answers the request
// itself, from a goroutine counted in c.inflight.
var respondLater any = laterPayload{}

// method is one registered method.
type method struct {
	fn handler
	// advertise lists it in hello-ok's features.methods: only methods that
	// work are advertised; placeholders answering UNAVAILABLE are not.
	advertise bool
}

// advertisedEvents are the events the gateway emits (hello-ok
// features.events).
var advertisedEvents = []string{
	protocol.EventConnectChallenge, "agent", "chat", "sessions.changed",
	protocol.EventPresence, protocol.EventTick, protocol.EventShutdown, protocol.EventHealth,
	"device.pair.requested", "device.pair.resolved", "heartbeat", "cron",
	"exec.approval.requested", "exec.approval.resolved",
}

// advertisedMethods lists the methods hello-ok announces, sorted.
func (s *Server) advertisedMethods() []string {
	out := make([]string, 0, len(s.methods))
	for name, m := range s.methods {
		if m.advertise {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// readLoop reads requests until the connection ends.
func (s *Server) readLoop(c *conn) {
	for {
		data, err := c.readMessage(c.ctx, s.cfg.Policy.MaxPayload, "payload too large")
		if err != nil {
			if errors.Is(err, errBinaryFrame) {
				c.respond(protocol.InvalidFrameID, nil, protocol.InvalidRequest("invalid request frame: binary frames are not supported; send JSON text frames", nil))
				continue
			}
			return
		}
		if _, _, gen := s.currentSecret(); gen != c.secretGen {
			c.closeAsync(protocol.CloseAuthChanged, protocol.ReasonAuthChanged)
			return
		}
		req, err := protocol.DecodeRequest(data)
		if err != nil {
			var fe *protocol.FrameError
			if errors.As(err, &fe) && !fe.Malformed {
				c.respond(fe.ID, nil, fe.ErrorShape())
			}
			continue
		}
		s.handle(c, req)
	}
}

// handle authorises and runs one request, in the order of openclaw-facts
// §1.8: role and scope first, so a caller without admin cannot probe which
// methods exist.
func (s *Server) handle(c *conn, req protocol.RequestFrame) {
	if req.Method == "connect" {
		c.respond(req.ID, nil, protocol.InvalidRequest("connect is only valid as the first request", nil))
		return
	}
	if e := protocol.Authorize(c.role, c.scopes, req.Method, c.protocol); e != nil {
		s.metrics.requests.WithLabelValues(metricMethod(s, req.Method), "denied").Inc()
		if e.Message == protocol.UnauthorizedRole(c.role).Message {
			c.unauthorized++
			if c.unauthorized > protocol.UnauthorizedFloodLimit {
				c.log.Warn("closing a client after repeated unauthorized calls")
				c.closeAsync(protocol.ClosePolicyViolation, protocol.ReasonRepeatedUnauthorized)
				return
			}
		} else {
			c.unauthorized = 0
		}
		c.respond(req.ID, nil, e)
		return
	}
	c.unauthorized = 0
	m, ok := s.methods[req.Method]
	if !ok {
		s.metrics.requests.WithLabelValues("other", "unknown").Inc()
		c.respond(req.ID, nil, protocol.UnknownMethod(req.Method))
		return
	}
	if s.backend.Load() == nil && req.Method != "health" {
		c.respond(req.ID, nil, protocol.StartupUnavailable(req.Method))
		return
	}
	payload, e := m.fn(c.ctx, c, req)
	if payload == respondLater {
		return
	}
	s.answer(c, req, payload, e)
}

// answer counts a request's outcome and sends its response.
func (s *Server) answer(c *conn, req protocol.RequestFrame, payload any, e *protocol.ErrorShape) {
	result := "ok"
	if e != nil {
		result = "error"
	}
	s.metrics.requests.WithLabelValues(req.Method, result).Inc()
	c.respond(req.ID, payload, e)
}

// metricMethod keeps the method label's cardinality bounded: unknown names
// are "other".
func metricMethod(s *Server, name string) string {
	if _, ok := s.methods[name]; ok {
		return name
	}
	return "other"
}

// decodeParams decodes a request's params strictly: unknown members and
// trailing data are errors naming the method, so a typo is reported rather
// than ignored. Missing params decode as {}.
func decodeParams(req protocol.RequestFrame, v any) *protocol.ErrorShape {
	data := bytes.TrimSpace(req.Params)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		data = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return invalidParams(req.Method, describeJSONError(err))
	}
	if dec.More() {
		return invalidParams(req.Method, "trailing data after the params object")
	}
	return nil
}

// decodeParamsAccepting is decodeParams for a method whose OpenClaw schema
// has members Switchboard accepts and does not act on (filters, paging and
// display hints of features it lacks): the members named in ignored are
// dropped first, so any other unknown member is still refused by name.
func decodeParamsAccepting(req protocol.RequestFrame, v any, ignored ...string) *protocol.ErrorShape {
	data := bytes.TrimSpace(req.Params)
	if len(data) > 0 && data[0] == '{' {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(data, &members); err != nil {
			return invalidParams(req.Method, describeJSONError(err))
		}
		dropped := false
		for _, name := range ignored {
			if _, ok := members[name]; ok {
				delete(members, name)
				dropped = true
			}
		}
		if dropped {
			b, err := json.Marshal(members)
			if err != nil {
				return invalidParams(req.Method, err.Error())
			}
			req.Params = b
		}
	}
	return decodeParams(req, v)
}

// decodeParamsLenient decodes params, ignoring members it does not know:
// for methods whose OpenClaw schema has many optional members Switchboard
// does not act on.
func decodeParamsLenient(req protocol.RequestFrame, v any) *protocol.ErrorShape {
	data := bytes.TrimSpace(req.Params)
	if len(data) == 0 || bytes.Equal(data, []byte("null")) {
		data = []byte("{}")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return invalidParams(req.Method, describeJSONError(err))
	}
	return nil
}

func invalidParams(method, why string) *protocol.ErrorShape {
	return protocol.InvalidRequest(fmt.Sprintf("invalid %s params: %s", method, why), nil)
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field != "" {
			return fmt.Sprintf("%s must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("params must be an object, not %s", te.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown member " + f
	}
	return strings.TrimPrefix(msg, "json: ")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr":
		return "an object"
	}
	return "a number"
}

// errorShape converts a backend error into what the client receives.
func errorShape(err error) *protocol.ErrorShape {
	var es *protocol.ErrorShape
	if errors.As(err, &es) {
		return es
	}
	if errors.Is(err, agent.ErrBusy) {
		return protocol.Unavailable("the session has a run in progress; abort it (chat.abort) or retry when it ends", 1000)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return protocol.Unavailable("the request was cancelled or timed out", 1000)
	}
	return protocol.InvalidRequest(err.Error(), nil)
}
