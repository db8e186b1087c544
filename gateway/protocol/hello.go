package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Limits and timings of OpenClaw's gateway (openclaw-facts §1.2,
// src/gateway/server-constants.ts).
const (
	// MaxPreauthPayloadBytes caps every frame before the handshake
	// completes; a larger frame closes the socket with CloseMessageTooBig.
	MaxPreauthPayloadBytes = 64 * 1024
	// MaxPayloadBytes is the frame limit after hello-ok (policy.maxPayload).
	MaxPayloadBytes = 25 * 1024 * 1024
	// MaxBufferedBytes is the per-connection send buffer above which a
	// client is a slow consumer (policy.maxBufferedBytes).
	MaxBufferedBytes = 50 * 1024 * 1024
	// TickIntervalMs is the tick event period (policy.tickIntervalMs).
	TickIntervalMs = 30000
	// HandshakeTimeoutMs is how long a socket may stay unauthenticated
	// (v3 server default; v4 docs say 15000 for clients).
	HandshakeTimeoutMs = 10000
	// MaxPreauthSocketsPerIP caps unauthenticated sockets per address.
	MaxPreauthSocketsPerIP = 32
	// DefaultAttachmentMaxBytes is v4's default policy.attachments.maxBytes
	// (the docs say "20 MB").
	DefaultAttachmentMaxBytes = 20 * 1024 * 1024
	// DefaultAttachmentMaxImageBytes is v4's default
	// policy.attachments.maxImageBytes ("min(maxBytes, 6 MB)").
	DefaultAttachmentMaxImageBytes = 6 * 1024 * 1024
)

// HelloOk is the payload of a successful connect response (openclaw-facts
// §1.7, §1.15). One value serves both versions; MarshalFor writes the shape
// the negotiated version expects.
type HelloOk struct {
	// Type is TypeHelloOk; MarshalFor sets it.
	Type string `json:"type"`
	// Protocol is the negotiated version; MarshalFor sets it.
	Protocol int `json:"protocol"`
	// Server identifies this gateway and connection.
	Server ServerInfo `json:"server"`
	// Features lists the advertised methods and events.
	Features Features `json:"features"`
	// Snapshot is the initial state.
	Snapshot Snapshot `json:"snapshot"`
	// CanvasHostURL is v3's canvas host; dropped for v4.
	CanvasHostURL string `json:"canvasHostUrl,omitempty"`
	// PluginSurfaceURLs is v4's replacement for CanvasHostURL; dropped for
	// v3.
	PluginSurfaceURLs map[string]string `json:"pluginSurfaceUrls,omitempty"`
	// Auth is the granted role and scopes and any issued device token. v3
	// sends it only when a device token was issued; v4 always sends it.
	Auth *HelloAuth `json:"auth,omitempty"`
	// Policy is the connection's limits.
	Policy Policy `json:"policy"`
}

// ServerInfo is HelloOk.Server.
type ServerInfo struct {
	// Version is the server's version (non-empty).
	Version string `json:"version"`
	// Commit is the build commit; v3 only.
	Commit string `json:"commit,omitempty"`
	// Host is the host name; v3 only.
	Host string `json:"host,omitempty"`
	// ConnID is this connection's unique id.
	ConnID string `json:"connId"`
}

// Features is HelloOk.Features: a discovery list, not the complete set of
// callable methods.
type Features struct {
	// Methods are the advertised method names.
	Methods []string `json:"methods"`
	// Events are the advertised event names.
	Events []string `json:"events"`
}

// HelloAuth is HelloOk.Auth.
type HelloAuth struct {
	// DeviceToken is a token issued to the device for reconnecting.
	DeviceToken string `json:"deviceToken,omitempty"`
	// Role is the granted role.
	Role string `json:"role"`
	// Scopes are the granted scopes.
	Scopes []string `json:"scopes"`
	// IssuedAtMs is when DeviceToken was issued; nil leaves it out.
	IssuedAtMs *int64 `json:"issuedAtMs,omitempty"`
	// DeviceTokens lists the device's tokens per role, if any.
	DeviceTokens []IssuedDeviceToken `json:"deviceTokens,omitempty"`
}

// IssuedDeviceToken is one entry of HelloAuth.DeviceTokens.
type IssuedDeviceToken struct {
	// DeviceToken is the token.
	DeviceToken string `json:"deviceToken"`
	// Role is the role it grants.
	Role string `json:"role"`
	// Scopes are the scopes it grants.
	Scopes []string `json:"scopes"`
	// IssuedAtMs is when it was issued.
	IssuedAtMs int64 `json:"issuedAtMs"`
}

// Policy is HelloOk.Policy.
type Policy struct {
	// MaxPayload is the largest frame the server accepts.
	MaxPayload int64 `json:"maxPayload"`
	// MaxBufferedBytes is the send buffer above which the client is a slow
	// consumer.
	MaxBufferedBytes int64 `json:"maxBufferedBytes"`
	// TickIntervalMs is the tick period; clients close after two missed
	// ticks.
	TickIntervalMs int64 `json:"tickIntervalMs"`
	// Attachments are v4's attachment limits; dropped for v3.
	Attachments *AttachmentPolicy `json:"attachments,omitempty"`
}

// AttachmentPolicy is v4's Policy.Attachments.
type AttachmentPolicy struct {
	// MaxBytes is the largest attachment.
	MaxBytes int64 `json:"maxBytes"`
	// MaxImageBytes is the largest image attachment.
	MaxImageBytes int64 `json:"maxImageBytes"`
}

// DefaultPolicy returns OpenClaw's policy values: 25 MiB frames, 50 MiB
// buffer, 30 s ticks, and v4's default attachment limits.
func DefaultPolicy() Policy {
	return Policy{
		MaxPayload: MaxPayloadBytes, MaxBufferedBytes: MaxBufferedBytes, TickIntervalMs: TickIntervalMs,
		Attachments: &AttachmentPolicy{MaxBytes: DefaultAttachmentMaxBytes, MaxImageBytes: DefaultAttachmentMaxImageBytes},
	}
}

// Snapshot is the gateway state sent in hello-ok.
type Snapshot struct {
	// Presence lists connected clients.
	Presence []PresenceEntry `json:"presence"`
	// Health is the cached health report; nil is sent as {} (v4 requires an
	// object).
	Health any `json:"health"`
	// StateVersion is the presence and health versions.
	StateVersion StateVersion `json:"stateVersion"`
	// UptimeMs is the gateway's uptime.
	UptimeMs int64 `json:"uptimeMs"`
	// ConfigPath is the configuration file's path.
	ConfigPath string `json:"configPath,omitempty"`
	// StateDir is the state directory.
	StateDir string `json:"stateDir,omitempty"`
	// SessionDefaults names the default agent and main session.
	SessionDefaults *SessionDefaults `json:"sessionDefaults,omitempty"`
	// AuthMode is none, token, password or trusted-proxy.
	AuthMode string `json:"authMode,omitempty"`
	// UpdateAvailable announces a newer release.
	UpdateAvailable *UpdateAvailable `json:"updateAvailable,omitempty"`
}

// SessionDefaults is Snapshot.SessionDefaults.
type SessionDefaults struct {
	// DefaultAgentID is the default agent's id.
	DefaultAgentID string `json:"defaultAgentId"`
	// MainKey is the main session's short key, e.g. "main".
	MainKey string `json:"mainKey"`
	// MainSessionKey is the main session's full key, e.g.
	// "agent:main:main".
	MainSessionKey string `json:"mainSessionKey"`
	// Scope is the DM scope, if configured.
	Scope string `json:"scope,omitempty"`
}

// UpdateAvailable is Snapshot.UpdateAvailable.
type UpdateAvailable struct {
	// CurrentVersion is the running version.
	CurrentVersion string `json:"currentVersion"`
	// LatestVersion is the newest release.
	LatestVersion string `json:"latestVersion"`
	// Channel is the release channel.
	Channel string `json:"channel"`
}

// PresenceEntry is one connected client in Snapshot.Presence and presence
// events.
type PresenceEntry struct {
	// Host is the client's host or display name.
	Host string `json:"host,omitempty"`
	// IP is the client's address (omitted for local clients).
	IP string `json:"ip,omitempty"`
	// Version is the client's version.
	Version string `json:"version,omitempty"`
	// Platform is the client's platform.
	Platform string `json:"platform,omitempty"`
	// DeviceFamily is the client's device family.
	DeviceFamily string `json:"deviceFamily,omitempty"`
	// ModelIdentifier is the client's hardware model.
	ModelIdentifier string `json:"modelIdentifier,omitempty"`
	// Mode is the client's mode.
	Mode string `json:"mode,omitempty"`
	// LastInputSeconds is the client's idle time; nil leaves it out.
	LastInputSeconds *int64 `json:"lastInputSeconds,omitempty"`
	// Reason is why the entry changed, e.g. "connect".
	Reason string `json:"reason,omitempty"`
	// Tags are free-form labels.
	Tags []string `json:"tags,omitempty"`
	// Text is a free-form status line.
	Text string `json:"text,omitempty"`
	// Ts is when the entry was last refreshed, in epoch milliseconds.
	Ts int64 `json:"ts"`
	// DeviceID is the client's device id.
	DeviceID string `json:"deviceId,omitempty"`
	// Roles are the client's roles.
	Roles []string `json:"roles,omitempty"`
	// Scopes are the client's scopes.
	Scopes []string `json:"scopes,omitempty"`
	// InstanceID is the client's instance id.
	InstanceID string `json:"instanceId,omitempty"`
}

// ErrHelloAuthRequired is returned by MarshalFor for a v4 hello-ok without
// Auth: v4 clients require the granted role and scopes.
var ErrHelloAuthRequired = errors.New("protocol: v4 hello-ok requires auth (role and scopes)")

// MarshalFor encodes h for the negotiated protocol version:
//
//   - both: type "hello-ok" and the given protocol; nil lists are sent as
//     []; a nil health as {};
//   - v3: server.commit and server.host when set; canvasHostUrl when set;
//     auth only when it carries a device token (v3 clients require one in
//     auth); no policy.attachments and no pluginSurfaceUrls;
//   - v4: server is only {version, connId}; auth always (ErrHelloAuthRequired
//     when nil); policy.attachments when set; pluginSurfaceUrls instead of
//     canvasHostUrl.
func (h HelloOk) MarshalFor(protocol int) ([]byte, error) {
	if protocol < MinProtocol || protocol > MaxProtocol {
		return nil, fmt.Errorf("protocol: cannot encode hello-ok for version %d", protocol)
	}
	h.Type = TypeHelloOk
	h.Protocol = protocol
	h.Features.Methods = orEmpty(h.Features.Methods)
	h.Features.Events = orEmpty(h.Features.Events)
	h.Snapshot = h.Snapshot.normalized()
	if h.Auth != nil {
		auth := *h.Auth
		auth.Scopes = orEmpty(auth.Scopes)
		h.Auth = &auth
	}
	if protocol == ProtocolV3 {
		h.PluginSurfaceURLs = nil
		h.Policy.Attachments = nil
		if h.Auth != nil && h.Auth.DeviceToken == "" {
			h.Auth = nil
		}
	} else {
		if h.Auth == nil {
			return nil, ErrHelloAuthRequired
		}
		h.Server.Commit, h.Server.Host = "", ""
		h.CanvasHostURL = ""
	}
	return json.Marshal(h)
}

func (s Snapshot) normalized() Snapshot {
	if s.Presence == nil {
		s.Presence = []PresenceEntry{}
	}
	if s.Health == nil {
		s.Health = struct{}{}
	}
	return s
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
