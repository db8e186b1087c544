package protocol

import (
	"encoding/json"
	"errors"
	"slices"
)

// Protocol versions.
const (
	// ProtocolV3 is OpenClaw's protocol until May 2026.
	ProtocolV3 = 3
	// ProtocolV4 is OpenClaw's protocol since May 2026 (openclaw-facts §1.15).
	ProtocolV4 = 4
	// MinProtocol is the oldest version Switchboard speaks.
	MinProtocol = ProtocolV3
	// MaxProtocol is the newest version Switchboard speaks.
	MaxProtocol = ProtocolV4
)

// Client ids accepted in client.id (GATEWAY_CLIENT_IDS,
// src/gateway/protocol/client-info.ts, openclaw-facts §1.5).
const (
	// ClientWebchatUI is the web chat page.
	ClientWebchatUI = "webchat-ui"
	// ClientControlUI is OpenClaw's browser Control UI.
	ClientControlUI = "openclaw-control-ui"
	// ClientTUI is the terminal UI.
	ClientTUI = "openclaw-tui"
	// ClientWebchat is a web chat client.
	ClientWebchat = "webchat"
	// ClientCLI is the command-line client.
	ClientCLI = "cli"
	// ClientGateway is a generic programmatic client (backends).
	ClientGateway = "gateway-client"
	// ClientMacOS is the macOS app.
	ClientMacOS = "openclaw-macos"
	// ClientIOS is the iOS app.
	ClientIOS = "openclaw-ios"
	// ClientAndroid is the Android app.
	ClientAndroid = "openclaw-android"
	// ClientNodeHost is a headless node.
	ClientNodeHost = "node-host"
	// ClientTest is used by tests.
	ClientTest = "test"
	// ClientFingerprint is a fingerprinting probe.
	ClientFingerprint = "fingerprint"
	// ClientProbe is a health probe.
	ClientProbe = "openclaw-probe"
	// ClientBrowserCopilot is OpenClaw's browser extension (2026.9).
	ClientBrowserCopilot = "openclaw-browser-copilot"
	// ClientLinux is the Linux desktop app (2026.9).
	ClientLinux = "openclaw-linux"
	// ClientWatchOS is the watchOS app (2026.9).
	ClientWatchOS = "openclaw-watchos"
	// ClientWorker is a remote worker (2026.9).
	ClientWorker = "openclaw-worker"
)

// ClientIDs lists every accepted client.id; any other value fails
// validation.
var ClientIDs = []string{
	ClientWebchatUI, ClientControlUI, ClientTUI, ClientWebchat, ClientCLI, ClientGateway,
	ClientMacOS, ClientIOS, ClientAndroid, ClientNodeHost, ClientTest, ClientFingerprint,
	ClientProbe, ClientBrowserCopilot, ClientLinux, ClientWatchOS, ClientWorker,
}

// Client modes accepted in client.mode (GATEWAY_CLIENT_MODES).
const (
	// ModeWebchat is a browser chat client.
	ModeWebchat = "webchat"
	// ModeCLI is a command-line client.
	ModeCLI = "cli"
	// ModeUI is a native or terminal UI.
	ModeUI = "ui"
	// ModeBackend is a programmatic client.
	ModeBackend = "backend"
	// ModeNode is a node (device) client.
	ModeNode = "node"
	// ModeProbe is a health probe.
	ModeProbe = "probe"
	// ModeWorker is a remote worker (OpenClaw 2026.9).
	ModeWorker = "worker"
	// ModeTest is used by tests.
	ModeTest = "test"
)

// ClientModes lists every accepted client.mode.
var ClientModes = []string{ModeWebchat, ModeCLI, ModeUI, ModeBackend, ModeNode, ModeWorker, ModeProbe, ModeTest}

// ConnectParams is the params object of the first request, method
// "connect" (openclaw-facts §1.5). ValidateConnect fills it; its JSON form
// is what a client sends.
type ConnectParams struct {
	// MinProtocol is the oldest protocol version the client speaks (≥ 1).
	MinProtocol int `json:"minProtocol"`
	// MaxProtocol is the newest protocol version the client speaks (≥ 1).
	MaxProtocol int `json:"maxProtocol"`
	// Client describes the connecting program.
	Client ClientInfo `json:"client"`
	// Caps are client capabilities; operators opt into tool events with
	// "tool-events", nodes declare camera, canvas, screen, location, voice,
	// talk. Nil when absent or empty.
	Caps []string `json:"caps,omitempty"`
	// Commands is a node's claimed invoke allowlist. Nil when absent or
	// empty.
	Commands []string `json:"commands,omitempty"`
	// Permissions are a node's permission toggles. Nil when absent or empty.
	Permissions map[string]bool `json:"permissions,omitempty"`
	// PathEnv is a node's PATH.
	PathEnv string `json:"pathEnv,omitempty"`
	// Role is RoleOperator (the default) or RoleNode after ValidateConnect.
	Role string `json:"role,omitempty"`
	// Scopes are the requested operator scopes; never nil after
	// ValidateConnect (default-deny: absent means none).
	Scopes []string `json:"scopes"`
	// Device is the device identity proof, or nil.
	Device *ConnectDevice `json:"device,omitempty"`
	// Auth carries shared-secret and device-token credentials, or nil.
	Auth *ConnectAuth `json:"auth,omitempty"`
	// Locale is the client's locale, e.g. "en-US".
	Locale string `json:"locale,omitempty"`
	// UserAgent is the client's user agent string.
	UserAgent string `json:"userAgent,omitempty"`
}

// ClientInfo is ConnectParams.Client.
type ClientInfo struct {
	// ID is one of ClientIDs.
	ID string `json:"id"`
	// DisplayName is a human label; not used for policy.
	DisplayName string `json:"displayName,omitempty"`
	// Version is the client's version (non-empty).
	Version string `json:"version"`
	// BuildID identifies the client's build (1-96 characters).
	BuildID string `json:"buildId,omitempty"`
	// TimeZone is the client's self-reported IANA zone (1-64 characters).
	TimeZone string `json:"timeZone,omitempty"`
	// Platform is the client's platform (non-empty); bound into the v3
	// device signature.
	Platform string `json:"platform"`
	// DeviceFamily is e.g. "iPhone"; bound into the v3 device signature.
	DeviceFamily string `json:"deviceFamily,omitempty"`
	// ModelIdentifier is the hardware model, e.g. "iPhone17,1".
	ModelIdentifier string `json:"modelIdentifier,omitempty"`
	// Mode is one of ClientModes.
	Mode string `json:"mode"`
	// InstanceID distinguishes installations of the same product.
	InstanceID string `json:"instanceId,omitempty"`
}

// ConnectDevice is the device identity proof: an Ed25519 public key, its
// id, and a signature over the challenge (see package gateway/auth).
type ConnectDevice struct {
	// ID is the lowercase sha256 hex of the raw public key.
	ID string `json:"id"`
	// PublicKey is the raw 32-byte key in base64url, or PEM SPKI.
	PublicKey string `json:"publicKey"`
	// Signature is the Ed25519 signature in base64url (or base64).
	Signature string `json:"signature"`
	// SignedAt is the signing time in epoch milliseconds (≥ 0).
	SignedAt int64 `json:"signedAt"`
	// Nonce echoes the connect.challenge nonce.
	Nonce string `json:"nonce"`
}

// ConnectAuth carries credentials. Every member is optional and may be
// empty.
type ConnectAuth struct {
	// Token is the gateway's shared token, or a device token.
	Token string `json:"token,omitempty"`
	// BootstrapToken is a one-time pairing token.
	BootstrapToken string `json:"bootstrapToken,omitempty"`
	// DeviceToken is a token previously issued in hello-ok.auth.
	DeviceToken string `json:"deviceToken,omitempty"`
	// Password is the gateway's shared password.
	Password string `json:"password,omitempty"`
}

// ConnectError reports connect params that fail validation; Message is
// "invalid connect params: <reasons>" in OpenClaw's wording.
type ConnectError struct {
	// Message is the full text to send as the INVALID_REQUEST message.
	Message string
}

// Error returns Message.
func (e *ConnectError) Error() string { return e.Message }

// ErrInvalidRole is returned by ValidateConnect for a well-formed connect
// whose role is neither RoleOperator nor RoleNode.
var ErrInvalidRole = errors.New(MessageInvalidRole)

var (
	schemaNonEmptyList = &schema{kind: schemaArray, items: schemaNonEmpty}
	schemaProtocol     = &schema{kind: schemaInteger, minimum: 1}

	connectParamsSchema = &schema{kind: schemaObject, props: []property{
		{name: "minProtocol", required: true, schema: schemaProtocol},
		{name: "maxProtocol", required: true, schema: schemaProtocol},
		{name: "client", required: true, schema: &schema{kind: schemaObject, props: []property{
			{name: "id", required: true, schema: &schema{kind: schemaEnum, values: ClientIDs}},
			{name: "displayName", schema: schemaNonEmpty},
			{name: "version", required: true, schema: schemaNonEmpty},
			{name: "buildId", schema: &schema{kind: schemaString, minLength: 1, maxLength: 96}},
			{name: "platform", required: true, schema: schemaNonEmpty},
			{name: "deviceFamily", schema: schemaNonEmpty},
			{name: "modelIdentifier", schema: schemaNonEmpty},
			{name: "timeZone", schema: &schema{kind: schemaString, minLength: 1, maxLength: 64}},
			{name: "mode", required: true, schema: &schema{kind: schemaEnum, values: ClientModes}},
			{name: "instanceId", schema: schemaNonEmpty},
		}}},
		{name: "caps", schema: schemaNonEmptyList},
		{name: "commands", schema: schemaNonEmptyList},
		// A node's computer-use declaration (OpenClaw 2026.9); accepted and
		// not acted on: Switchboard has no computer use.
		{name: "computerUse", schema: &schema{kind: schemaAny}},
		{name: "permissions", schema: &schema{kind: schemaRecord, items: &schema{kind: schemaBool}}},
		{name: "pathEnv", schema: schemaText},
		{name: "role", schema: schemaNonEmpty},
		{name: "scopes", schema: schemaNonEmptyList},
		// The model catalog a client wants in hello-ok (OpenClaw 2026.9):
		// {agentId?, sessionKey?} or {agentId?, shortId, slugHint?}.
		// Accepted and not acted on: hello-ok carries no catalog here.
		{name: "modelCatalog", schema: &schema{kind: schemaAny}},
		{name: "device", schema: &schema{kind: schemaObject, props: []property{
			{name: "id", required: true, schema: schemaNonEmpty},
			{name: "publicKey", required: true, schema: schemaNonEmpty},
			{name: "signature", required: true, schema: schemaNonEmpty},
			{name: "signedAt", required: true, schema: &schema{kind: schemaInteger, minimum: 0}},
			{name: "nonce", required: true, schema: schemaNonEmpty},
		}}},
		{name: "auth", schema: &schema{kind: schemaObject, props: []property{
			{name: "token", schema: schemaText},
			{name: "bootstrapToken", schema: schemaText},
			{name: "deviceToken", schema: schemaText},
			{name: "password", schema: schemaText},
			// Runtime tokens of OpenClaw's own agent runtimes (2026.9);
			// Switchboard issues none, so they authenticate nothing.
			{name: "approvalRuntimeToken", schema: schemaText},
			{name: "agentRuntimeIdentityToken", schema: schemaText},
		}}},
		{name: "locale", schema: schemaText},
		{name: "userAgent", schema: schemaText},
	}}
)

// ValidateConnect validates and decodes connect params exactly as
// OpenClaw's ConnectParamsSchema does (openclaw-facts §1.5): required
// integer minProtocol and maxProtocol ≥ 1; client.id from ClientIDs;
// non-empty client.version and client.platform; client.mode from
// ClientModes; an all-or-nothing device; unknown members rejected at every
// level. A failure is a *ConnectError.
//
// It then applies the role rule of §1.4 step 4: role defaults to
// RoleOperator, and anything but RoleOperator or RoleNode returns the fully
// decoded params together with ErrInvalidRole. OpenClaw checks the protocol
// range before the role, so a caller reproducing its order must check
// Negotiate first even when err is ErrInvalidRole (CheckConnect does this).
// Scopes default to an empty, non-nil list.
func ValidateConnect(params json.RawMessage) (ConnectParams, error) {
	v := &validator{}
	switch {
	case len(params) == 0:
		v.add("", "must be object") // absent params: AJV sees undefined
	case !json.Valid(params):
		// Params from DecodeRequest are always valid JSON; anything else
		// is refused before the validator, which assumes valid input.
		return ConnectParams{}, &ConnectError{Message: "invalid connect params: invalid JSON"}
	default:
		v.validate(params, "", connectParamsSchema)
	}
	if !v.ok() {
		return ConnectParams{}, &ConnectError{Message: "invalid connect params: " + v.String()}
	}
	p := decodeConnect(params)
	if p.Role == "" {
		p.Role = RoleOperator
	}
	if p.Role != RoleOperator && p.Role != RoleNode {
		return p, ErrInvalidRole
	}
	return p, nil
}

// decodeConnect maps validated connect params into ConnectParams.
func decodeConnect(raw json.RawMessage) ConnectParams {
	var p ConnectParams
	members, _ := parseObject(raw)
	for _, m := range members {
		switch m.key {
		case "minProtocol":
			p.MinProtocol = clampInt(intValue(m.raw))
		case "maxProtocol":
			p.MaxProtocol = clampInt(intValue(m.raw))
		case "client":
			_ = json.Unmarshal(m.raw, &p.Client)
		case "caps":
			p.Caps = stringList(m.raw)
		case "commands":
			p.Commands = stringList(m.raw)
		case "permissions":
			_ = json.Unmarshal(m.raw, &p.Permissions)
			if len(p.Permissions) == 0 {
				p.Permissions = nil
			}
		case "pathEnv":
			p.PathEnv = decodeString(m.raw)
		case "role":
			p.Role = decodeString(m.raw)
		case "scopes":
			p.Scopes = stringList(m.raw)
		case "device":
			d := &ConnectDevice{}
			fields, _ := parseObject(m.raw)
			for _, f := range fields {
				switch f.key {
				case "id":
					d.ID = decodeString(f.raw)
				case "publicKey":
					d.PublicKey = decodeString(f.raw)
				case "signature":
					d.Signature = decodeString(f.raw)
				case "signedAt":
					d.SignedAt = intValue(f.raw)
				case "nonce":
					d.Nonce = decodeString(f.raw)
				}
			}
			p.Device = d
		case "auth":
			p.Auth = &ConnectAuth{}
			_ = json.Unmarshal(m.raw, p.Auth)
		case "locale":
			p.Locale = decodeString(m.raw)
		case "userAgent":
			p.UserAgent = decodeString(m.raw)
		}
	}
	if p.Scopes == nil {
		p.Scopes = []string{}
	}
	return p
}

// stringList decodes a validated array of strings, returning nil for an
// empty one.
func stringList(raw json.RawMessage) []string {
	var out []string
	_ = json.Unmarshal(raw, &out)
	if len(out) == 0 {
		return nil
	}
	return out
}

func clampInt(n int64) int {
	const maxInt = int64(^uint(0) >> 1)
	if n > maxInt {
		return int(maxInt)
	}
	return int(n)
}

// Negotiate returns the highest protocol version in both the client's range
// [minP, maxP] and Switchboard's [MinProtocol, MaxProtocol], and false when
// the ranges do not overlap.
//
// OpenClaw v4 accepts v3 only from node and probe clients
// (MIN_CLIENT_PROTOCOL_VERSION); Switchboard accepts v3 from every client.
func Negotiate(minP, maxP int) (int, bool) {
	v := min(maxP, MaxProtocol)
	if v < MinProtocol || v < minP {
		return 0, false
	}
	return v, true
}

// Rejection is a failed handshake step: the response error to send, then the
// close code and reason.
type Rejection struct {
	// Error is sent as the connect response's error.
	Error *ErrorShape
	// CloseCode is the WebSocket close code that follows the response.
	CloseCode int
	// CloseReason is the close reason, already within 120 bytes.
	CloseReason string
}

// CheckConnect runs the first handshake steps of openclaw-facts §1.4 on the
// params of a valid "connect" request, in OpenClaw's order: params
// validation (INVALID_REQUEST "invalid connect params: …", close 1008),
// protocol negotiation (INVALID_REQUEST "protocol mismatch", close 1002) and
// the role check (INVALID_REQUEST "invalid role", close 1008). On success it
// returns the params and the negotiated version.
func CheckConnect(params json.RawMessage) (ConnectParams, int, *Rejection) {
	p, err := ValidateConnect(params)
	var ce *ConnectError
	if errors.As(err, &ce) {
		return ConnectParams{}, 0, &Rejection{
			Error:     InvalidRequest(ce.Message, nil),
			CloseCode: ClosePolicyViolation, CloseReason: TruncateCloseReason(ce.Message),
		}
	}
	version, ok := Negotiate(p.MinProtocol, p.MaxProtocol)
	if !ok {
		return ConnectParams{}, 0, &Rejection{
			Error:     ProtocolMismatch(),
			CloseCode: CloseProtocolError, CloseReason: ReasonProtocolMismatch,
		}
	}
	if err != nil { // ErrInvalidRole
		return ConnectParams{}, 0, &Rejection{
			Error:     InvalidRequest(MessageInvalidRole, nil),
			CloseCode: ClosePolicyViolation, CloseReason: ReasonInvalidRole,
		}
	}
	return p, version, nil
}

// HasCap reports whether the client declared the capability cap.
func (p ConnectParams) HasCap(cap string) bool { return slices.Contains(p.Caps, cap) }

// CapToolEvents is the operator capability that opts into tool stream
// events.
const CapToolEvents = "tool-events"

// CapStructuredStream is the capability that opts into the structured
// stream: the assistant and thinking agent streams, with each model
// response's message and block events and their (throttled) deltas. A
// Switchboard extension; clients without it get a run's text from chat
// events, as OpenClaw's clients read it.
const CapStructuredStream = "structured-stream"
