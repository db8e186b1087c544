// Command gendocs writes config/docs_gen.go, the doc comments of every
// configuration struct and field, for the JSON Schema. Run it with
// `go generate ./config`.
package main

import (
	"fmt"
	"os"
	"reflect"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/config/internal/docgen"
)

func main() {
	// go generate runs in the config directory, one below the module root.
	src, err := docgen.Generate(reflect.TypeFor[config.Config](), "..", config.ModulePath)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile("docs_gen.go", src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
