// Command linebridge runs Switchboard with the line bridge and the echo
// model: a chat bot you can talk to with netcat, and nothing else to set
// up.
//
//	go run ./examples/linebridge/cmd/linebridge -state /tmp/linebridge
//	nc 127.0.0.1 7070
//	HELLO ada
//	hi there
//
// It answers "WELCOME <chat>", "OK 1" once the message is journaled, then
// the model's reply as "MSG ..." lines. SIGINT or SIGTERM stops it.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/examples/linebridge"
	"github.com/switchboardhq/switchboard/examples/linebridge/host"
)

func main() {
	stateDir := flag.String("state", "linebridge-state", "state directory (store and transcripts)")
	listen := flag.String("listen", linebridge.DefaultListen, "address the bridge listens on")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*stateDir, *listen, log); err != nil {
		fmt.Fprintln(os.Stderr, "linebridge:", err)
		os.Exit(1)
	}
}

func run(stateDir, listen string, log *slog.Logger) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// channels.line as Go: anyone who connects may talk to the bot.
	line := linebridge.Config{Enabled: true, Listen: listen}
	line.DMPolicy, line.AllowFrom = bridges.DMOpen, []string{"*"}

	h, err := host.Start(ctx, host.Options{StateDir: stateDir, Line: line, Log: log})
	if err != nil {
		return err
	}
	if addr, err := h.Addr(ctx); err == nil {
		log.Info("ready: connect with netcat and say HELLO <name>", "addr", addr.String())
	}
	<-ctx.Done()

	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return h.Stop(stopCtx)
}
