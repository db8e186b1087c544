package gateway

import (
	"errors"
	"fmt"
	"net"
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
}

// DefaultConfig returns the gateway settings used when the configuration does
// not say otherwise: loopback, port 18789.
func DefaultConfig() Config {
	return Config{Bind: BindLoopback, Port: DefaultPort}
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

// Validate checks that a custom bind names an IPv4 address.
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
	return errors.Join(errs...)
}
