package pgtest

import (
	"os"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// A database is created, reachable, and gone when its test ends.
func TestDatabaseIsFreshAndDropped(t *testing.T) {
	var name string
	t.Run("use", func(t *testing.T) {
		url := Database(t)
		name = url[strings.LastIndex(url, "/")+1 : strings.Index(url, "?")]
		c := Shared(t)
		if err := c.psql(name, "CREATE TABLE x (a int); INSERT INTO x VALUES (1)"); err != nil {
			t.Fatal(err)
		}
	})
	c := Shared(t)
	if err := c.psql(name, "SELECT 1"); err == nil {
		t.Fatalf("database %s still there after its test", name)
	}
	if err := c.psql("postgres", "SELEC 1"); err == nil || !strings.Contains(err.Error(), "syntax error") {
		t.Fatalf("a bad statement: %v", err)
	}
}
