package docgen

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FixtureSection is a section that embeds the shared keys.
type FixtureSection struct {
	fixtureShared
	// Enabled is the section's own key.
	Enabled bool `json:"enabled,omitempty"`
	// FixtureNamed, embedded under a json name, is an ordinary key.
	FixtureNamed `json:"named"`
}

// fixtureShared holds keys every section has; unexported, as an embedded
// type may be.
type fixtureShared struct {
	// Limit is a promoted key.
	Limit int `json:"limit,omitempty"`
	// Inner is a promoted key whose value is an object.
	Inner FixtureInner `json:"inner"`
}

// FixtureInner is reachable only through an embedded struct.
type FixtureInner struct {
	// Depth is a key of the object.
	Depth int `json:"depth,omitempty"`
}

// FixtureNamed is embedded under a name.
type FixtureNamed struct {
	// Label is a key of the named object.
	Label string `json:"label,omitempty"`
}

// FixturePointer embeds a pointer, which the config decoder refuses.
type FixturePointer struct {
	*FixtureInner
}

// generate runs Generate on root with this file as its package's source:
// Generate reads only non-test files, so the file is copied as one into a
// directory laid out like this package's.
func generate(t *testing.T, root reflect.Type) (string, error) {
	t.Helper()
	src, err := os.ReadFile("docgen_test.go")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pkg := root.PkgPath()
	modulePath, base := pkg[:strings.LastIndex(pkg, "/")], pkg[strings.LastIndex(pkg, "/")+1:]
	if err := os.Mkdir(filepath.Join(dir, base), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, base, "fixture.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := Generate(root, dir, modulePath)
	return string(out), err
}

func TestGenerateDocumentsEmbeddedTypes(t *testing.T) {
	out, err := generate(t, reflect.TypeFor[FixtureSection]())
	if err != nil {
		t.Fatal(err)
	}
	pkg := reflect.TypeFor[FixtureSection]().PkgPath()
	for _, key := range []string{
		pkg + ".FixtureSection.Enabled",
		pkg + ".FixtureSection.FixtureNamed",
		pkg + ".fixtureShared.Limit",
		pkg + ".fixtureShared.Inner",
		pkg + ".FixtureInner.Depth",
		pkg + ".FixtureNamed.Label",
	} {
		if !strings.Contains(out, `"`+key+`"`) {
			t.Errorf("no doc for %s in:\n%s", key, out)
		}
	}
	if strings.Contains(out, `FixtureSection.fixtureShared"`) {
		t.Errorf("the promoted embedded field is documented as a key:\n%s", out)
	}
}

func TestGenerateRefusesAnEmbeddedPointer(t *testing.T) {
	_, err := generate(t, reflect.TypeFor[FixturePointer]())
	if err == nil || !strings.Contains(err.Error(), "docgen.FixturePointer.FixtureInner embeds *docgen.FixtureInner") {
		t.Errorf("err = %v, want the embedded pointer named", err)
	}
}
