package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
)

// profileEnv names a file for a CPU profile of `switchboard run`, written
// from start to shutdown (for the load tool: go tool pprof on it). It is
// an environment variable, not a flag, because it is for developers.
const profileEnv = "SWITCHBOARD_CPUPROFILE"

// startProfile starts the CPU profile profileEnv asks for and returns the
// function that ends it; without the variable both do nothing.
func startProfile(lookup func(string) (string, bool), stderr io.Writer) func() {
	path, ok := lookup(profileEnv)
	if !ok || path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard: %s: %v; running without a profile\n", profileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(stderr, "switchboard: %s: %v; running without a profile\n", profileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
