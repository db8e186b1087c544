// Command switchboard-bench measures a real `switchboard run` child
// process against in-process fakes of the chat platforms.
//
// Mode footprint (the first mode; load, chaos and soak follow): binary
// size, the time from exec to /readyz answering 200, idle RSS after -idle
// with the Telegram, Slack (Socket Mode) and Discord bridges connected to
// their fakes and the gateway on, then RSS with -conns idle gateway
// connections. Output: a table on stdout and, with -json, a JSON file.
//
//	go run ./cmd/switchboard-bench -mode footprint -json footprint.json
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the command-line flags.
type options struct {
	mode     string
	bin      string
	idle     time.Duration
	conns    int
	jsonPath string
	keep     bool
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("switchboard-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.mode, "mode", "footprint", "what to measure: footprint")
	fs.StringVar(&o.bin, "bin", "", "the switchboard binary to run (default: build ./cmd/switchboard with CGO_ENABLED=0 into a temporary directory)")
	fs.DurationVar(&o.idle, "idle", 10*time.Second, "footprint: how long the daemon idles before its RSS is read")
	fs.IntVar(&o.conns, "conns", 10000, "footprint: idle gateway connections to open after the idle reading (0: none)")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	fs.BoolVar(&o.keep, "keep", false, "keep the child's state directory and log")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	switch o.mode {
	case "footprint":
		res, err := footprint(ctx, o, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "switchboard-bench: %v\n", err)
			return 1
		}
		res.table(stdout)
		if o.jsonPath != "" {
			if err := writeJSON(o.jsonPath, res); err != nil {
				fmt.Fprintf(stderr, "switchboard-bench: %v\n", err)
				return 1
			}
		}
		return 0
	default:
		fmt.Fprintf(stderr, "switchboard-bench: unknown -mode %q; modes: footprint\n", o.mode)
		return 2
	}
}
