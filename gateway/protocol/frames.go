package protocol

import (
	"bytes"
	"encoding/json"
)

// Frame types (the "type" member of every frame).
const (
	// TypeRequest marks a client request frame.
	TypeRequest = "req"
	// TypeResponse marks a server response frame.
	TypeResponse = "res"
	// TypeEvent marks a server event frame.
	TypeEvent = "event"
	// TypeHelloOk marks the payload of a successful connect response.
	TypeHelloOk = "hello-ok"
)

// MaxTraceparentLength is the longest traceparent a v4 request frame may
// carry.
const MaxTraceparentLength = 128

// RequestFrame is a client request: {type:"req", id, method, params?}. A v4
// client may add a W3C traceparent.
type RequestFrame struct {
	// Type is always TypeRequest.
	Type string `json:"type"`
	// ID is the client's non-empty request id; every response echoes it.
	ID string `json:"id"`
	// Method is the non-empty RPC method name.
	Method string `json:"method"`
	// Params is the method's parameters as sent (a copy, so the caller may
	// reuse the frame's buffer), or nil when the frame had none.
	Params json.RawMessage `json:"params,omitempty"`
	// Traceparent is the optional v4 W3C trace context (at most
	// MaxTraceparentLength characters); v3 clients never send it.
	Traceparent string `json:"traceparent,omitempty"`
}

// ResponseFrame is the server's answer to a request: {type:"res", id, ok,
// payload?, error?}. A method may send more than one response with the same
// id (the agent method acknowledges, then answers).
type ResponseFrame struct {
	// Type is always TypeResponse.
	Type string `json:"type"`
	// ID echoes RequestFrame.ID, or is "invalid" when none could be read.
	ID string `json:"id"`
	// OK reports success.
	OK bool `json:"ok"`
	// Payload is the result; nil leaves it out.
	Payload any `json:"payload,omitempty"`
	// Error is set when OK is false.
	Error *ErrorShape `json:"error,omitempty"`
}

// EventFrame is a server push: {type:"event", event, payload?, seq?,
// stateVersion?}. Targeted sends and the connect challenge carry no seq.
type EventFrame struct {
	// Type is always TypeEvent.
	Type string `json:"type"`
	// Event is the event name (see GatewayEvents).
	Event string `json:"event"`
	// Payload is the event body; nil leaves it out.
	Payload any `json:"payload,omitempty"`
	// Seq is the broadcast sequence number; nil leaves it out.
	Seq *int64 `json:"seq,omitempty"`
	// StateVersion carries the presence and health versions; nil leaves it
	// out.
	StateVersion *StateVersion `json:"stateVersion,omitempty"`
}

// StateVersion is the pair of monotonic versions of the presence list and
// the health snapshot.
type StateVersion struct {
	// Presence is the presence list's version.
	Presence int64 `json:"presence"`
	// Health is the health snapshot's version.
	Health int64 `json:"health"`
}

// ErrorShape is the error of a failed response: {code, message, details?,
// retryable?, retryAfterMs?}.
type ErrorShape struct {
	// Code is one of the Code* constants.
	Code string `json:"code"`
	// Message is human-readable; some clients match on it.
	Message string `json:"message"`
	// Details is structured context, for example {code:"AUTH_*", …}.
	Details any `json:"details,omitempty"`
	// Retryable reports whether retrying the same request may succeed.
	Retryable bool `json:"retryable,omitempty"`
	// RetryAfterMs is how long to wait before retrying; nil leaves it out.
	RetryAfterMs *int64 `json:"retryAfterMs,omitempty"`
}

// ChallengePayload is the payload of the connect.challenge event the server
// sends as soon as a socket opens.
type ChallengePayload struct {
	// Nonce is a fresh UUID the client must sign and echo in device.nonce.
	Nonce string `json:"nonce"`
	// Ts is the server time in epoch milliseconds; v4 clients use it as
	// device.signedAt.
	Ts int64 `json:"ts"`
}

// TickPayload is the payload of the periodic tick event.
type TickPayload struct {
	// Ts is the server time in epoch milliseconds.
	Ts int64 `json:"ts"`
}

// ShutdownPayload is the payload of the shutdown event.
type ShutdownPayload struct {
	// Reason is a non-empty human-readable reason.
	Reason string `json:"reason"`
	// RestartExpectedMs is how soon the server expects to be back; nil
	// leaves it out.
	RestartExpectedMs *int64 `json:"restartExpectedMs,omitempty"`
}

// OK builds a successful response to the request with the given id.
func OK(id string, payload any) ResponseFrame {
	return ResponseFrame{Type: TypeResponse, ID: id, OK: true, Payload: payload}
}

// Fail builds a failed response to the request with the given id.
func Fail(id string, err *ErrorShape) ResponseFrame {
	return ResponseFrame{Type: TypeResponse, ID: id, OK: false, Error: err}
}

// Event builds an event frame without seq or stateVersion.
func Event(name string, payload any) EventFrame {
	return EventFrame{Type: TypeEvent, Event: name, Payload: payload}
}

// InvalidFrameID is the response id used when a bad frame carried no
// readable id.
const InvalidFrameID = "invalid"

// FrameError reports a frame that is not a valid request. OpenClaw answers
// such a frame after the handshake with Fail(ID, InvalidRequest(Message,
// nil)), but only when the data was JSON at all: for Malformed data it sends
// nothing (and before the handshake it closes the socket either way).
type FrameError struct {
	// ID is the frame's id when it had a non-empty string one, else
	// InvalidFrameID.
	ID string
	// Message is "invalid request frame: <reasons>" in OpenClaw's wording.
	Message string
	// Malformed reports that data was not a single JSON value.
	Malformed bool
}

// Error returns Message.
func (e *FrameError) Error() string { return e.Message }

// ErrorShape converts e to the INVALID_REQUEST error OpenClaw sends back.
func (e *FrameError) ErrorShape() *ErrorShape { return InvalidRequest(e.Message, nil) }

var requestFrameSchema = &schema{kind: schemaObject, props: []property{
	{name: "type", required: true, schema: &schema{kind: schemaConst, values: []string{TypeRequest}}},
	{name: "id", required: true, schema: schemaNonEmpty},
	{name: "method", required: true, schema: schemaNonEmpty},
	{name: "params", schema: &schema{kind: schemaAny}},
	{name: "traceparent", schema: &schema{kind: schemaString, maxLength: MaxTraceparentLength}},
}}

// DecodeRequest parses one text frame as a request. The frame must be a
// JSON object with exactly the members of RequestFrame (additionalProperties
// is false), type "req", and non-empty string id and method; params may be
// any JSON value. Errors are *FrameError.
func DecodeRequest(data []byte) (RequestFrame, error) {
	raw, err := parseDocument(data)
	if err != nil {
		return RequestFrame{}, &FrameError{ID: InvalidFrameID, Message: "invalid request frame: invalid JSON", Malformed: true}
	}
	v := &validator{}
	v.validate(raw, "", requestFrameSchema)
	members, _ := parseObject(raw)
	if !v.ok() {
		id := InvalidFrameID
		if rawID, ok := lookup(members, "id"); ok && kindOf(rawID) == kindString {
			if s := decodeString(rawID); s != "" {
				id = s
			}
		}
		return RequestFrame{}, &FrameError{ID: id, Message: "invalid request frame: " + v.String()}
	}
	f := RequestFrame{Type: TypeRequest}
	for _, m := range members {
		switch m.key {
		case "id":
			f.ID = decodeString(m.raw)
		case "method":
			f.Method = decodeString(m.raw)
		case "traceparent":
			f.Traceparent = decodeString(m.raw)
		case "params":
			f.Params = bytes.Clone(m.raw) // the caller may reuse data
		}
	}
	return f, nil
}

// PeekType returns the "type" member of a JSON object frame, and false when
// data is not a JSON object or its type is not a string.
func PeekType(data []byte) (string, bool) {
	raw, err := parseDocument(data)
	if err != nil {
		return "", false
	}
	members, err := parseObject(raw)
	if err != nil {
		return "", false
	}
	t, ok := lookup(members, "type")
	if !ok || kindOf(t) != kindString {
		return "", false
	}
	return decodeString(t), true
}
