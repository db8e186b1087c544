package main

import (
	"context"
	"fmt"
	"runtime"
)

func versionCommand() *command {
	return &command{
		name:    "version",
		summary: "print the version",
		run: func(_ context.Context, c *cli, _ *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard version: takes no arguments\n")
				return exitUsage
			}
			fmt.Fprintf(c.stdout, "switchboard %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return exitOK
		},
	}
}
