package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"strconv"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/store"
)

func gatewayTokenCommand() *command {
	return &command{
		name:    "gateway token",
		summary: "print the token gateway clients connect with",
		help: `Prints the shared token that WebSocket clients (the web chat, OpenClaw's apps
and CLI) send when they connect, alone on stdout, so that
  TOKEN=$(switchboard gateway token)
works; guidance goes to stderr.

The token is gateway.auth.token when the configuration sets it, else the one
the daemon generated on its first start and keeps in <stateDir>/gateway.token;
before that first start there is none, and the command says how to start the
daemon (it creates nothing itself). In password or none auth mode there is no
token: the command says so and exits with code 1.`,
		run: func(_ context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard gateway token: takes no arguments\n")
				return exitUsage
			}
			cfg, path, code := c.loadConfig(g.config, config.ForManagement)
			if cfg == nil {
				return code
			}
			gw := cfg.Gateway
			where := gatewayURL(gw)
			switch gw.EffectiveAuthMode() {
			case gateway.AuthPassword:
				fmt.Fprintf(c.stderr, "switchboard gateway token: there is no token: gateway.auth.mode is password in %s, so clients connect with gateway.auth.password instead. Set gateway.auth.mode to token to use a token.\n", path)
				return exitFailure
			case gateway.AuthNone:
				fmt.Fprintf(c.stderr, "switchboard gateway token: there is no token: gateway.auth.mode is none in %s, so clients on this machine connect without one. Set gateway.auth.mode to token to require one.\n", path)
				return exitFailure
			}
			if tok := gw.Auth.Token; tok != "" {
				fmt.Fprintln(c.stdout, tok)
				fmt.Fprintf(c.stderr, "This is gateway.auth.token from %s. Paste it into your client's gateway token setting to connect to %s.\n", path, where)
				if auth.WeakToken(tok) {
					fmt.Fprintf(c.stderr, "Warning: the daemon refuses this token as too weak (at least %d characters, not a placeholder or pattern); remove gateway.auth.token to have one generated, or set a random one.\n", auth.MinTokenLength)
				}
				return exitOK
			}
			stateDir, err := cfg.ResolveStateDir(c.lookup, c.home)
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard: %v\n", err)
				return exitUsage
			}
			file := filepath.Join(stateDir, store.GatewayTokenFile)
			tok, err := store.ReadGatewayToken(stateDir)
			if errors.Is(err, fs.ErrNotExist) {
				// Nothing is made here: the daemon makes the token on its
				// first start (issue 26, finding 1).
				fmt.Fprintf(c.stderr, "switchboard gateway token: there is no gateway token yet (%s): the daemon makes one when it first starts. Start it with\n  %s\nand run this again.\n", file, c.suggest("run", "--config", path))
				return exitFailure
			}
			if err != nil {
				fmt.Fprintf(c.stderr, "switchboard gateway token: %v\n", err)
				return exitFailure
			}
			fmt.Fprintln(c.stdout, tok)
			fmt.Fprintf(c.stderr, "This is the gateway token kept in %s. Paste it into your client's gateway token setting to connect to %s.\n", file, where)
			return exitOK
		},
	}
}

// gatewayURL is the address a client on this machine, or on the network
// for a lan bind, opens.
func gatewayURL(gw gateway.Config) string {
	host := gw.Host()
	if host == "0.0.0.0" {
		host = "<this machine's address>"
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(gw.Port)) + "/"
}
