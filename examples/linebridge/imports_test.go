package linebridge_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestImportsOnlyTheContract keeps the bridge a bridge: of this module it
// imports the contract, markup and core, and nothing it depends on, even
// indirectly, is the daemon (dispatcher, store, agent, channels) or the
// model clients. The built-in adapters are held to the same rule by
// internal/arch.
func TestImportsOnlyTheContract(t *testing.T) {
	const module = "github.com/switchboardhq/switchboard/"
	imports, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, module+"examples/linebridge").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := []string{"bridges", "bridges/markup", "core"}
	for _, imp := range strings.Fields(string(imports)) {
		if rel, ok := strings.CutPrefix(imp, module); ok && !slices.Contains(allowed, rel) {
			t.Errorf("the bridge imports %s; a bridge imports only %v of this module", rel, allowed)
		}
	}
	deps, err := exec.Command("go", "list", "-deps", module+"examples/linebridge").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(deps)) {
		for _, bad := range []string{module + "queue", module + "store", module + "core/agent", module + "channels",
			module + "core/llm"} {
			if dep == bad || strings.HasPrefix(dep, bad+"/") {
				t.Errorf("the bridge depends on %s; it must build without the daemon", dep)
			}
		}
	}
}
