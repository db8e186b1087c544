package main

import (
	"context"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/store"
	"github.com/switchboardhq/switchboard/store/postgres"
)

// openStore opens the state store the configuration chooses (store.driver):
// SQLite in stateDir, the default, or the PostgreSQL database at
// store.url. The caller closes it.
func openStore(ctx context.Context, cfg *config.Config, stateDir string) (store.Full, error) {
	if cfg.Store.EffectiveDriver() == store.DriverPostgres {
		return postgres.Open(ctx, cfg.Store.URL, postgres.Options{})
	}
	return store.Open(ctx, stateDir)
}
