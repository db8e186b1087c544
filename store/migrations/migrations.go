// Package migrations holds the state store's schema, numbered SQL files
// (NNNN_name.sql, see store.LoadMigrations), one folder per database:
// sqlite/, embedded and applied by store.Open, and postgres/, applied by
// store/postgres.
package migrations

import "embed"

// Postgres holds postgres/NNNN_name.sql.
//
//go:embed postgres/*.sql
var Postgres embed.FS

// PostgresDir is Postgres's folder.
const PostgresDir = "postgres"
