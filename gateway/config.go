package gateway

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// DefaultPort is the gateway's port when none is configured, the same as
// OpenClaw's so its clients find Switchboard where they expect it.
const DefaultPort = 18789

// BindMode says which network interfaces the gateway listens on.
type BindMode string

// The bind modes.
const (
	// BindLoopback listens on 127.0.0.1 only: reachable from this machine.
	BindLoopback BindMode = "loopback"
	// BindLAN listens on every interface (0.0.0.0).
	BindLAN BindMode = "lan"
	// BindCustom listens on gateway.customBindHost.
	BindCustom BindMode = "custom"
)

// EnumValues lists the accepted bind modes.
func (BindMode) EnumValues() []string {
	return []string{string(BindLoopback), string(BindLAN), string(BindCustom)}
}

// UnmarshalText accepts one of EnumValues.
func (m *BindMode) UnmarshalText(b []byte) error {
	s := BindMode(strings.ToLower(strings.TrimSpace(string(b))))
	for _, v := range m.EnumValues() {
		if string(s) == v {
			*m = s
			return nil
		}
	}
	return fmt.Errorf("unknown bind mode %q", s)
}

// Config is the `gateway:` section of the configuration.
type Config struct {
	// Bind chooses the interfaces to listen on: loopback (default; this
	// machine only), lan (all interfaces) or custom (customBindHost).
	Bind BindMode `json:"bind,omitempty"`
	// CustomBindHost is the IPv4 address to listen on when bind is custom.
	CustomBindHost string `json:"customBindHost,omitempty"`
	// Port is the TCP port for HTTP and WebSocket. Default 18789; 0 picks a
	// free port (useful in tests).
	Port int `json:"port" min:"0" max:"65535"`
	// Auth says how WebSocket clients authenticate.
	Auth AuthConfig `json:"auth"`
	// ControlUI configures browser clients (the web chat page and
	// OpenClaw's Control UI).
	ControlUI ControlUIConfig `json:"controlUi"`
	// Policy holds the connection limits announced to clients in hello-ok.
	Policy PolicyConfig `json:"policy"`
	// HandshakeTimeoutMs is how long a new connection has to complete its
	// connect request before it is closed. Default 10000.
	HandshakeTimeoutMs int `json:"handshakeTimeoutMs,omitempty" min:"100"`
	// TrustedProxies lists the reverse proxies (IP addresses or CIDR
	// ranges, e.g. 127.0.0.1 or 10.0.0.0/8) whose X-Forwarded-For (or,
	// without it, Forwarded) header names the client. Only a connection
	// from one of them has its client address taken from the header: the
	// rightmost address in it that is not itself a trusted proxy. That
	// address is what the failed-auth lockout and the connection caps
	// count. Behind a proxy, list it here, or every client shares the
	// proxy's address and one of them can lock the others out. Empty: the
	// headers are ignored.
	TrustedProxies []string `json:"trustedProxies,omitempty"`
	// Limits bounds what clients can hold open; the defaults are far above
	// what one user needs.
	Limits LimitsConfig `json:"limits"`
}

// LimitsConfig is `gateway.limits`: caps that keep the gateway, and the
// rest of the process, answering under a flood of connections. A zero
// field takes its documented default.
type LimitsConfig struct {
	// MaxConnections caps the open connections on the gateway's port,
	// plain HTTP and WebSocket alike. Over it, an idle keep-alive
	// connection is closed to make room; failing that, the new connection
	// may only ask /healthz or /readyz (a small reserve of 16 is kept for
	// them) and anything else gets 503. Default 0: derived from the
	// process's open-file limit, leaving room for the bridges, the store,
	// transcripts and model clients: the limit minus 256 minus a quarter
	// of it, at least 32 and at most 16384. A value the open-file limit
	// cannot hold (above the limit minus 272) is lowered, with a warning.
	MaxConnections int `json:"maxConnections,omitempty" min:"0"`
	// MaxConnectionsPerAddress caps the open connections from one client
	// address (an IPv4 address, or an IPv6 /64, which one host usually
	// holds whole). A trusted proxy is counted by the clients it names, not
	// as one address. Default 0: 128.
	MaxConnectionsPerAddress int `json:"maxConnectionsPerAddress,omitempty" min:"0"`
	// MaxPreauthConnections caps the WebSockets that have not completed
	// their connect request yet, over all addresses (each address may hold
	// 32). Over it, the oldest is closed with 1013 "try again later", so a
	// flood of idle sockets cannot keep a real client from connecting.
	// Default 0: 256.
	MaxPreauthConnections int `json:"maxPreauthConnections,omitempty" min:"0"`
	// MaxDecodeBytes caps the bytes of inbound WebSocket messages larger
	// than 64 KiB that are being read and decoded at once, over all
	// connections; a large message waits for room before its body is read.
	// It is raised to policy.maxPayload if lower, so the largest message
	// still fits. Default 0: twice policy.maxPayload.
	MaxDecodeBytes int64 `json:"maxDecodeBytes,omitempty" min:"0"`
	// IdleTimeoutMs is how long an HTTP keep-alive connection may sit
	// between requests before it is closed. WebSockets are not affected:
	// they have ticks. Default 0: 60000.
	IdleTimeoutMs int `json:"idleTimeoutMs,omitempty" min:"0"`
}

// AuthMode is how clients prove they may connect.
type AuthMode string

// The auth modes.
const (
	// AuthToken requires the shared gateway token (the default).
	AuthToken AuthMode = "token"
	// AuthPassword requires the shared password.
	AuthPassword AuthMode = "password"
	// AuthNone lets any client connect; allowed only on a loopback bind.
	AuthNone AuthMode = "none"
)

// EnumValues lists the accepted auth modes.
func (AuthMode) EnumValues() []string {
	return []string{string(AuthToken), string(AuthPassword), string(AuthNone)}
}

// UnmarshalText accepts one of EnumValues.
func (m *AuthMode) UnmarshalText(b []byte) error {
	s := AuthMode(strings.ToLower(strings.TrimSpace(string(b))))
	if s == "" {
		*m = ""
		return nil
	}
	for _, v := range m.EnumValues() {
		if string(s) == v {
			*m = s
			return nil
		}
	}
	return fmt.Errorf("unknown auth mode %q", s)
}

// AuthConfig is `gateway.auth`.
type AuthConfig struct {
	// Mode is token (default), password, or none (loopback binds only). When
	// unset it is password if a password is set, else token.
	Mode AuthMode `json:"mode,omitempty"`
	// Token is the shared secret clients send in their connect request.
	// When empty in token mode, Switchboard generates one on first start
	// and keeps it in <stateDir>/gateway.token; `switchboard gateway token`
	// prints it. Write it as ${SWITCHBOARD_GATEWAY_TOKEN} to keep it out of
	// the file.
	Token string `json:"token,omitempty" config:"secret"`
	// Password is the shared secret in password mode.
	Password string `json:"password,omitempty" config:"secret"`
}

// ControlUIConfig is `gateway.controlUi`.
type ControlUIConfig struct {
	// AllowedOrigins lists the browser origins (scheme://host[:port]) that
	// may open a WebSocket besides the gateway's own origin. Required for
	// a browser on another host; leave empty otherwise.
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`
}

// PolicyConfig holds the connection limits of hello-ok's policy.
type PolicyConfig struct {
	// MaxPayload is the largest WebSocket message, in bytes, accepted from
	// an authenticated client (before authentication the cap is 64 KiB).
	// Default 26214400 (25 MiB).
	MaxPayload int64 `json:"maxPayload,omitempty" min:"65536"`
	// MaxBufferedBytes caps the bytes queued for one client; a client that
	// falls this far behind loses droppable events, and is disconnected
	// with 1008 "slow consumer" for the rest. Default 52428800 (50 MiB).
	MaxBufferedBytes int64 `json:"maxBufferedBytes,omitempty" min:"65536"`
	// TickIntervalMs is the interval of the tick event clients use to detect
	// a dead connection. Default 30000.
	TickIntervalMs int64 `json:"tickIntervalMs,omitempty" min:"1000"`
}

// DefaultConfig returns the gateway settings used when the configuration does
// not say otherwise: loopback, port 18789, token auth, OpenClaw's limits.
func DefaultConfig() Config {
	return Config{
		Bind:               BindLoopback,
		Port:               DefaultPort,
		HandshakeTimeoutMs: 10000,
		Policy: PolicyConfig{
			MaxPayload:       25 << 20,
			MaxBufferedBytes: 50 << 20,
			TickIntervalMs:   30000,
		},
	}
}

// EffectiveAuthMode resolves an unset mode: password if a password is
// set, else token (OpenClaw's resolution).
func (c Config) EffectiveAuthMode() AuthMode {
	if c.Auth.Mode != "" {
		return c.Auth.Mode
	}
	if c.Auth.Password != "" {
		return AuthPassword
	}
	return AuthToken
}

// Loopback reports whether the gateway listens on this machine only.
func (c Config) Loopback() bool {
	ip := net.ParseIP(c.Host())
	return ip != nil && ip.IsLoopback()
}

// Host returns the address the listener binds to.
func (c Config) Host() string {
	switch c.Bind {
	case BindLAN:
		return "0.0.0.0"
	case BindCustom:
		return c.CustomBindHost
	default:
		return "127.0.0.1"
	}
}

// Addr returns host:port for net.Listen.
func (c Config) Addr() string {
	return net.JoinHostPort(c.Host(), strconv.Itoa(c.Port))
}

// Validate checks that a custom bind names an IPv4 address, that the auth
// mode fits the bind, and that origins and trusted proxies parse.
func (c Config) Validate() error {
	var errs []error
	if c.Bind == BindCustom {
		ip := net.ParseIP(c.CustomBindHost)
		if c.CustomBindHost == "" {
			errs = append(errs, core.FieldErrorf("customBindHost", "required when bind is custom"))
		} else if ip == nil || ip.To4() == nil {
			errs = append(errs, core.FieldErrorf("customBindHost", fmt.Sprintf("%q is not an IPv4 address", c.CustomBindHost)))
		}
	} else if c.CustomBindHost != "" {
		errs = append(errs, core.FieldErrorf("customBindHost", "only used when bind is custom; set bind: custom or remove it"))
	}
	switch mode := c.EffectiveAuthMode(); {
	case mode == AuthNone && !c.Loopback():
		errs = append(errs, core.FieldErrorf("auth.mode", fmt.Sprintf("none is allowed only on a loopback bind; the gateway would listen on %s without authentication. Use token or password", c.Host())))
	case mode == AuthPassword && c.Auth.Password == "":
		errs = append(errs, core.FieldErrorf("auth.password", "required when auth.mode is password"))
	}
	for i, p := range c.TrustedProxies {
		if _, err := parseProxy(p); err != nil {
			errs = append(errs, core.FieldErrorf(fmt.Sprintf("trustedProxies[%d]", i), fmt.Sprintf("%q is not an IP address or CIDR range like 10.0.0.0/8", p)))
		}
	}
	for i, o := range c.ControlUI.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" {
			errs = append(errs, core.FieldErrorf(fmt.Sprintf("controlUi.allowedOrigins[%d]", i), fmt.Sprintf("%q is not an origin like https://chat.example.com", o)))
		}
	}
	return errors.Join(errs...)
}
