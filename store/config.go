package store

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// Driver names the database a store keeps its state in.
type Driver string

// The drivers.
const (
	// DriverSQLite is the default: state.db in the state directory, one
	// process at a time.
	DriverSQLite Driver = "sqlite"
	// DriverPostgres is a PostgreSQL database (store/postgres), which
	// several instances can share.
	DriverPostgres Driver = "postgres"
)

// EnumValues lists the accepted drivers.
func (Driver) EnumValues() []string { return []string{string(DriverSQLite), string(DriverPostgres)} }

// UnmarshalText accepts one of EnumValues, in any case.
func (d *Driver) UnmarshalText(b []byte) error {
	s := Driver(strings.ToLower(strings.TrimSpace(string(b))))
	for _, v := range d.EnumValues() {
		if string(s) == v {
			*d = s
			return nil
		}
	}
	return fmt.Errorf("unknown store driver %q", s)
}

// Config is the `store:` section of the configuration.
type Config struct {
	// Driver chooses where state is kept: sqlite (default; state.db in the
	// state directory, one process) or postgres (a PostgreSQL database at
	// url, which several instances can share).
	Driver Driver `json:"driver,omitempty"`
	// URL is the PostgreSQL database for driver postgres: a libpq URL
	// (postgres://user:password@host:5432/db?sslmode=require) or key=value
	// string. Write it as ${SWITCHBOARD_DATABASE_URL} to keep the password
	// out of the file.
	URL string `json:"url,omitempty" config:"secret"`
	// Instance names this instance in `switchboard cluster status` and in
	// the leases it holds (with a random suffix per start); default the
	// host name. Give each instance on one host its own.
	Instance string `json:"instance,omitempty"`
	// LeaseTTL is how long a lease on a platform connection or a session
	// lasts unless its instance renews it: when an instance dies, its work
	// moves to another within about this long (2s to 5m; default 10s).
	// Only meaningful with several instances (driver postgres).
	LeaseTTL string `json:"leaseTtl,omitempty"`
}

// DefaultLeaseTTL is the lease length when leaseTtl is unset.
const DefaultLeaseTTL = 10 * time.Second

// LeaseDuration is LeaseTTL parsed (seconds for a bare number), or
// DefaultLeaseTTL when unset.
func (c Config) LeaseDuration() (time.Duration, error) {
	if strings.TrimSpace(c.LeaseTTL) == "" {
		return DefaultLeaseTTL, nil
	}
	d, err := core.ParseDuration(c.LeaseTTL, time.Second)
	if err != nil {
		return 0, err
	}
	if d < 2*time.Second || d > 5*time.Minute {
		return 0, fmt.Errorf("%s is outside 2s to 5m", d)
	}
	return d, nil
}

// EffectiveDriver is Driver, or sqlite when unset.
func (c Config) EffectiveDriver() Driver {
	if c.Driver == "" {
		return DriverSQLite
	}
	return c.Driver
}

// Validate checks that url goes with postgres and only with it.
func (c Config) Validate() error {
	switch c.EffectiveDriver() {
	case DriverPostgres:
		if strings.TrimSpace(c.URL) == "" {
			return core.FieldErrorf("url", "required when driver is postgres: the database to connect to, e.g. ${SWITCHBOARD_DATABASE_URL}")
		}
	case DriverSQLite:
		if c.URL != "" {
			return core.FieldErrorf("url", "only used when driver is postgres; the sqlite store lives in the state directory")
		}
	}
	if _, err := c.LeaseDuration(); err != nil {
		return core.FieldErrorf("leaseTtl", err.Error(), "; give a duration such as 10s")
	}
	if len(c.Instance) > 200 || strings.ContainsAny(c.Instance, " \t\n/") {
		return core.FieldErrorf("instance", strconv.Quote(c.Instance), ": use up to 200 characters without spaces or slashes, e.g. node-1")
	}
	return nil
}
