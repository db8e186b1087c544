// Command switchboard is the Switchboard daemon and its command-line tools.
//
//	switchboard run             start the daemon
//	switchboard config check    validate a configuration file
//	switchboard config schema   print the configuration's JSON Schema
//	switchboard whatsapp link   link a WhatsApp account (QR or pairing code)
//	switchboard version         print the version
//
// Exit codes: 0 success, 1 runtime failure, 2 usage or configuration error.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/queue"

	// Embedded zone data: cron tz and activeHours work on hosts (and
	// scratch containers) without /usr/share/zoneinfo.
	_ "time/tzdata"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	home, _ := os.UserHomeDir()
	c := &cli{
		program: os.Args[0],
		stdout:  os.Stdout,
		stderr:  os.Stderr,
		lookup:  os.LookupEnv,
		home:    home,
		signals: notifySignals,
	}
	if fd := int(os.Stdin.Fd()); term.IsTerminal(fd) {
		c.readSecret = func(prompt string) (string, error) {
			fmt.Fprint(os.Stderr, prompt)
			b, err := term.ReadPassword(fd)
			fmt.Fprintln(os.Stderr)
			return string(b), err
		}
	}
	os.Exit(c.main(context.Background(), os.Args[1:]))
}

// notifySignals returns a channel that receives SIGINT and SIGTERM, and a
// function that stops the delivery.
func notifySignals() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// cli holds what a command may touch of the outside world, so tests run
// commands in-process with their own environment and output.
type cli struct {
	// program is how the user ran this binary (os.Args[0]: "switchboard"
	// from PATH, "bin/switchboard" after `make build`), so the commands
	// it suggests run as typed; "" means "switchboard".
	program        string
	stdout, stderr io.Writer
	lookup         func(string) (string, bool)
	home           string
	signals        func() (<-chan os.Signal, func())
	// whatsappClient builds WhatsApp clients for the daemon's bridge and
	// for linking and logging out; nil means whatsmeow's (production).
	// Tests inject whatsapptest's fake phone.
	whatsappClient whatsapp.NewClientFunc
	// clock drives the daemon's scheduler (heartbeats, cron); nil means
	// the real clock. Tests set a manual one.
	clock queue.Clock
	// readSecret shows prompt and reads a line without echoing it, from
	// the terminal; nil means there is no terminal to ask on.
	readSecret func(prompt string) (string, error)
}

// suggest returns a command line of this binary to show the user: the
// program as it was run, then args, each quoted for a POSIX shell when it
// needs it.
func (c *cli) suggest(args ...string) string {
	prog := c.program
	if prog == "" {
		prog = "switchboard"
	}
	words := []string{shellQuote(prog)}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:=@+,.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// cancelOnSignal returns a context that ends at the first interrupt or
// terminate signal (or when ctx does); stop releases the signal handling.
func (c *cli) cancelOnSignal(ctx context.Context) (context.Context, func()) {
	sigs, stopSignals := c.signals()
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel()
		stopSignals()
	}
}
