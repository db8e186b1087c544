package store

import (
	"fmt"
	"strings"

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
	return nil
}
