package store

import (
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// writerDB opens a fresh database through the writer pool, the way Open
// migrates it.
func writerDB(t *testing.T) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := openPool(t.Context(), path, writerParams, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func migrationFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, body := range files {
		fsys["m/"+name] = &fstest.MapFile{Data: []byte(body)}
	}
	return fsys
}

func appliedVersions(t *testing.T, db *sql.DB) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), `SELECT version, name FROM schema_version ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var v int
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestMigrateAppliesInOrder(t *testing.T) {
	ctx := t.Context()
	db, path := writerDB(t)
	files := map[string]string{
		"0001_one.sql": `CREATE TABLE one (id INTEGER PRIMARY KEY);`,
		// Several statements in one file, and one that depends on 0001.
		"0002_two.sql": `
			CREATE TABLE two (id INTEGER PRIMARY KEY, one_id INTEGER NOT NULL REFERENCES one (id));
			CREATE INDEX two_one ON two (one_id);`,
		"0003_three.sql": `ALTER TABLE two ADD COLUMN note TEXT;`,
	}
	v, err := migrate(ctx, db, migrationFS(files), "m", path)
	if err != nil || v != 3 {
		t.Fatalf("migrate = %d, %v; want 3", v, err)
	}
	if got := strings.Join(appliedVersions(t, db), ","); got != "one,two,three" {
		t.Errorf("applied %s, want one,two,three", got)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO two (one_id, note) VALUES (42, 'x')`); err == nil {
		t.Error("foreign key not enforced")
	}

	// Again, with one more: only the new one runs.
	files["0004_four.sql"] = `CREATE TABLE four (id INTEGER PRIMARY KEY);`
	v, err = migrate(ctx, db, migrationFS(files), "m", path)
	if err != nil || v != 4 {
		t.Fatalf("second migrate = %d, %v; want 4", v, err)
	}
	if got := strings.Join(appliedVersions(t, db), ","); got != "one,two,three,four" {
		t.Errorf("applied %s, want one,two,three,four", got)
	}
}

func TestMigrateBadSet(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error
	}{
		{"gap", map[string]string{"0001_a.sql": "", "0003_c.sql": ""}, []string{"m/0003_c.sql", "0002"}},
		{"starts late", map[string]string{"0002_b.sql": ""}, []string{"m/0002_b.sql", "0001"}},
		{"zero", map[string]string{"0000_z.sql": ""}, []string{"m/0000_z.sql"}},
		{"duplicate", map[string]string{"0001_a.sql": "", "0001_b.sql": ""}, []string{"m/0001_b.sql", "m/0001_a.sql"}},
		{"no version", map[string]string{"0001_a.sql": "", "b.sql": ""}, []string{"m/b.sql"}},
		{"short version", map[string]string{"1_a.sql": ""}, []string{"m/1_a.sql"}},
		{"long version", map[string]string{"00001_a.sql": ""}, []string{"m/00001_a.sql"}},
		{"dash", map[string]string{"0001-a.sql": ""}, []string{"m/0001-a.sql"}},
		{"upper case", map[string]string{"0001_Meta.sql": ""}, []string{"m/0001_Meta.sql"}},
		{"not sql", map[string]string{"0001_a.sql": "", "README.md": ""}, []string{"m/README.md"}},
		{"subdirectory", map[string]string{"0001_a.sql": "", "0002_b.sql/x": ""}, []string{"m/0002_b.sql"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, path := writerDB(t)
			_, err := migrate(t.Context(), db, migrationFS(tc.files), "m", path)
			if err == nil {
				t.Fatal("migrate succeeded")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			assertOneLine(t, err)
			// A bad set is found before anything is written.
			var n int
			if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema`).Scan(&n); err != nil || n != 0 {
				t.Errorf("database has %d schema objects, %v; want 0", n, err)
			}
		})
	}
}

func TestMigrateEmpty(t *testing.T) {
	db, path := writerDB(t)
	_, err := migrate(t.Context(), db, fstest.MapFS{"m": &fstest.MapFile{Mode: fs.ModeDir | 0o755}}, "m", path)
	if err == nil || !strings.Contains(err.Error(), "no migrations in m") {
		t.Errorf("migrate of an empty dir: %v", err)
	}
}

func TestMigrateFailureRollsBack(t *testing.T) {
	ctx := t.Context()
	db, path := writerDB(t)
	files := map[string]string{
		"0001_ok.sql": `CREATE TABLE ok (id INTEGER PRIMARY KEY);`,
		// The first statement succeeds; the transaction must undo it.
		"0002_broken.sql": `CREATE TABLE half (id INTEGER PRIMARY KEY); CREATE TABLEX nope;`,
		"0003_later.sql":  `CREATE TABLE later (id INTEGER PRIMARY KEY);`,
	}
	v, err := migrate(ctx, db, migrationFS(files), "m", path)
	if err == nil {
		t.Fatal("migrate with bad SQL succeeded")
	}
	if v != 1 {
		t.Errorf("migrate returned version %d, want 1", v)
	}
	for _, want := range []string{"store: ", path, "m/0002_broken.sql"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	assertOneLine(t, err)
	if got := strings.Join(appliedVersions(t, db), ","); got != "ok" {
		t.Errorf("applied %s, want ok", got)
	}
	for table, want := range map[string]int{"ok": 1, "half": 0, "later": 0} {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name = ?`, table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != want {
			t.Errorf("table %s exists %d times, want %d", table, n, want)
		}
	}

	// Fixed, the next run picks up where it stopped.
	files["0002_broken.sql"] = `CREATE TABLE half (id INTEGER PRIMARY KEY);`
	if v, err := migrate(ctx, db, migrationFS(files), "m", path); err != nil || v != 3 {
		t.Errorf("migrate after fix = %d, %v; want 3", v, err)
	}
}

func TestMigrateSchemaTooNew(t *testing.T) {
	ctx := t.Context()
	db, path := writerDB(t)
	files := map[string]string{
		"0001_a.sql": `CREATE TABLE a (id INTEGER PRIMARY KEY);`,
		"0002_b.sql": `CREATE TABLE b (id INTEGER PRIMARY KEY);`,
	}
	if _, err := migrate(ctx, db, migrationFS(files), "m", path); err != nil {
		t.Fatal(err)
	}
	delete(files, "0002_b.sql")
	v, err := migrate(ctx, db, migrationFS(files), "m", path)
	if !errors.Is(err, ErrSchemaTooNew) {
		t.Fatalf("migrate = %d, %v; want ErrSchemaTooNew", v, err)
	}
	want := "store: schema too new: " + path + " has schema version 2, newer than this switchboard supports (1); upgrade switchboard or use a different stateDir"
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
}

func TestEmbeddedMigrations(t *testing.T) {
	migs, err := LoadMigrations(sqliteMigrations, sqliteMigrationsDir)
	if err != nil {
		t.Fatal(err)
	}
	if migs[0].Name != "meta" {
		t.Errorf("first migration is %s, want meta", migs[0].File)
	}
}
