// Command switchboard-bench measures a real `switchboard run` child
// process against in-process fakes of the chat platforms: Telegram, Slack
// (Socket Mode, with Slack's retries of unacknowledged events) and Discord
// (REST and gateway), WhatsApp configured without a linked device, and an
// OpenAI-compatible streaming model with -latency before the first token,
// -tps tokens per second and, with -tool, a tool call in every turn.
// Session i sends on the i-th of -platforms (round robin); every
// -group-every-th session is a group chat where the bot is mentioned.
//
// Mode load: -sessions × -messages, each session sending its next message
// once the last was answered. Measured: throughput, platform message →
// model request and model done → reply latencies, RSS, goroutines, the
// longest GC pause; checked: every message answered exactly once, in order
// (exit 1 otherwise). -svg writes a latency histogram.
//
// Mode chaos: the load of -sessions sessions while the child is killed
// with SIGKILL -kills times, each at a uniformly random time up to
// -kill-within after it was ready, and started again on the same state;
// then every answer is awaited and every transcript opened as the daemon
// opens it. Fails on a lost or reordered message, more than one duplicate
// per kill, or a transcript that does not load.
//
// Mode soak: -rate messages a second (open loop) for -duration with a
// heartbeat every 30 s and a cron job every minute; reports latency
// percentiles and the RSS slope after -warmup.
//
// Mode footprint: binary size, the time from exec to /readyz answering 200
// on a fresh state directory and on a restart, idle RSS after -idle, then
// RSS with -conns idle gateway connections.
//
// Mode gateway: gateway clients against the daemon's WebSocket (issue 22).
// Fan-out: -sessions sessions send -messages messages each through
// chat.send, each the next once the last's chat final came, in -rounds
// pairs of rounds: A, a client per session; B, one client carrying every
// session. Measured: messages/s, the child's CPU time per message, the
// frames and bytes each client read; A must reach 90% of B's throughput
// (medians). Long reply: -reply-clients clients follow one session, the
// first asks for a reply of -reply-bytes streamed in -reply-chunk-byte
// deltas at -reply-tps deltas a second, the others loaded the session's
// history or subscribed to its messages; every client reads as fast as it
// can. Each must stay connected, read at most 30× the reply's size and get
// the whole final.
//
// Output: a table on stdout and, with -json, a JSON file; exit status 1
// when a check fails.
//
//	go run ./cmd/switchboard-bench -mode chaos -kills 20 -tool
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// result is what a mode measured: a table for people, a verdict.
type result interface {
	table(w io.Writer)
	ok() bool
	failure() error
}

// options are the command-line flags.
type options struct {
	mode     string
	bin      string
	idle     time.Duration
	conns    int
	jsonPath string
	svgPath  string
	keep     bool
	load     loadOptions
	chaos    chaosOptions
	soak     soakOptions
	gateway  gatewayOptions
	cluster  clusterOptions
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("switchboard-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.mode, "mode", "footprint", "what to measure: load, chaos, cluster, soak, footprint or gateway")
	fs.StringVar(&o.bin, "bin", "", "the switchboard binary to run (default: build ./cmd/switchboard with CGO_ENABLED=0 into a temporary directory)")
	fs.DurationVar(&o.idle, "idle", 10*time.Second, "footprint: how long the daemon idles before its RSS is read")
	fs.IntVar(&o.conns, "conns", 10000, "footprint: idle gateway connections to open after the idle reading (0: none)")
	fs.StringVar(&o.jsonPath, "json", "", "write the results as JSON to this file")
	fs.BoolVar(&o.keep, "keep", false, "keep the child's state directory and log")
	fs.IntVar(&modelContextWindow, "context-window", 200000, "the model's context window in tokens; a small one makes long sessions compact (soak)")
	fs.StringVar(&childLogLevel, "log-level", "info", "the child's log level (debug shows every gate decision; use with -keep)")
	fs.StringVar(&o.svgPath, "svg", "", "load: write a latency histogram (SVG) to this file")
	fs.IntVar(&o.load.sessions, "sessions", 100, "load, gateway: sessions (chats) sending at once")
	fs.IntVar(&o.load.messages, "messages", 5, "load, gateway: messages per session (gateway: per round), each after the last was answered")
	fs.IntVar(&o.load.groupEvery, "group-every", 4, "load: every n-th session is a group where the bot is mentioned (0: DMs only)")
	fs.DurationVar(&o.load.latency, "latency", 0, "load, gateway: the model's time to first token")
	fs.Float64Var(&o.load.tps, "tps", 0, "load, gateway: the model's tokens per second (0: all at once)")
	fs.IntVar(&o.load.tokens, "tokens", 20, "load, gateway: tokens per answer")
	platforms := fs.String("platforms", "telegram,slack,discord", "load, chaos, soak: the platforms sessions send on, round robin")
	fs.IntVar(&o.load.maxConcurrent, "max-concurrent", 0, "load, chaos, soak: turns running at once (agents.defaults.maxConcurrent; 0: the default, 4)")
	fs.BoolVar(&o.load.tool, "tool", false, "load, chaos: the model calls a tool (ls) in every turn before it answers")
	fs.IntVar(&o.chaos.kills, "kills", 200, "chaos: how many times the child is killed with SIGKILL and started again")
	fs.DurationVar(&o.chaos.within, "kill-within", 4*time.Second, "chaos, cluster: each kill comes at a uniformly random time up to this long after the child was ready")
	fs.IntVar(&o.cluster.instances, "instances", 3, "cluster: instances sharing one PostgreSQL")
	fs.DurationVar(&o.cluster.down, "down", 2*time.Second, "cluster: how long a killed instance stays down before it starts again")
	fs.DurationVar(&o.cluster.leaseTTL, "lease-ttl", 3*time.Second, "cluster: the instances' store.leaseTtl")
	fs.DurationVar(&o.cluster.duration, "run-for", 30*time.Second, "cluster with -kills 0: how long the sessions send (a throughput run)")
	fs.DurationVar(&o.soak.duration, "duration", time.Hour, "soak: how long to send")
	fs.Float64Var(&o.soak.rate, "rate", 5, "soak: messages per second, round robin over -sessions chats")
	fs.DurationVar(&o.soak.warmup, "warmup", 10*time.Minute, "soak: the RSS slope is fitted to the samples after this (a third of -duration when that is shorter)")
	fs.DurationVar(&o.soak.sample, "sample", 10*time.Second, "soak: how often the child's RSS is read")
	fs.DurationVar(&o.load.replyTimeout, "reply-timeout", 60*time.Second, "load, gateway: how long a session waits for an answer before counting it lost")
	fs.IntVar(&o.gateway.rounds, "rounds", 3, "gateway: fan-out rounds of each shape, run A B A B …")
	fs.IntVar(&o.gateway.clients, "reply-clients", 10, "gateway: clients connected while the long reply streams")
	fs.IntVar(&o.gateway.replyBytes, "reply-bytes", 80<<10, "gateway: the long reply's size in bytes")
	fs.IntVar(&o.gateway.replyChunk, "reply-chunk", 64, "gateway: the long reply's bytes per model delta")
	fs.Float64Var(&o.gateway.replyTPS, "reply-tps", 256, "gateway: the long reply's model deltas per second (0: as fast as they go)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	for _, name := range strings.Split(*platforms, ",") {
		if name = strings.TrimSpace(name); !slices.Contains(platformNames, name) {
			fmt.Fprintf(stderr, "switchboard-bench: unknown platform %q in -platforms; platforms: %s\n", name, strings.Join(platformNames, ", "))
			return 2
		}
		o.load.platforms = append(o.load.platforms, name)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	fail := func(err error) int {
		fmt.Fprintf(stderr, "switchboard-bench: %v\n", err)
		return 1
	}
	// finish prints res and writes its JSON unless err, and turns the
	// verdict into the exit code.
	finish := func(res result, err error) int {
		if err == nil {
			res.table(stdout)
			if o.jsonPath != "" {
				err = writeJSON(o.jsonPath, res)
			}
		}
		if err != nil {
			return fail(err)
		}
		if !res.ok() {
			return fail(res.failure())
		}
		return 0
	}
	switch o.mode {
	case "footprint":
		res, err := footprint(ctx, o, stderr)
		return finish(res, err)
	case "load":
		res, err := load(ctx, o, o.load, stderr)
		if err == nil && o.svgPath != "" {
			err = writeHistogram(o.svgPath, map[string][]float64{
				"platform → model request": res.inToModel, "model done → reply": res.modelToReply,
			})
		}
		return finish(res, err)
	case "chaos":
		if o.chaos.kills < 1 || o.chaos.within <= 0 {
			fmt.Fprintln(stderr, "switchboard-bench: chaos needs -kills ≥ 1 and a positive -kill-within")
			return 2
		}
		res, err := chaos(ctx, o, o.load, o.chaos, stderr)
		return finish(res, err)
	case "soak":
		if o.soak.duration <= 0 || o.soak.rate <= 0 || o.soak.sample <= 0 || o.load.sessions < 1 {
			fmt.Fprintln(stderr, "switchboard-bench: soak needs a positive -duration, -rate and -sample and -sessions ≥ 1")
			return 2
		}
		if o.soak.warmup >= o.soak.duration {
			o.soak.warmup = o.soak.duration / 3
		}
		res, err := soak(ctx, o, o.load, o.soak, stderr)
		return finish(res, err)
	case "cluster":
		c := o.cluster
		c.kills, c.killWithin = o.chaos.kills, o.chaos.within
		if c.instances < 1 || c.kills < 0 || c.killWithin <= 0 || c.down < 0 || c.leaseTTL < 2*time.Second || (c.kills == 0 && c.duration <= 0) {
			fmt.Fprintln(stderr, "switchboard-bench: cluster needs -instances ≥ 1, -kills ≥ 0, a positive -kill-within, -down ≥ 0, -lease-ttl ≥ 2s and, with -kills 0, a positive -run-for")
			return 2
		}
		res, err := clusterRun(ctx, o, o.load, c, stderr)
		return finish(res, err)
	case "gateway":
		g := o.gateway
		if o.load.sessions < 1 || o.load.messages < 1 || g.rounds < 1 || g.clients < 1 || g.replyBytes < 1 || g.replyChunk < 1 || g.replyTPS < 0 {
			fmt.Fprintln(stderr, "switchboard-bench: gateway needs -sessions, -messages, -rounds, -reply-clients, -reply-bytes and -reply-chunk ≥ 1 and -reply-tps ≥ 0")
			return 2
		}
		res, err := gateway(ctx, o, o.load, g, stderr)
		return finish(res, err)
	default:
		fmt.Fprintf(stderr, "switchboard-bench: unknown -mode %q; modes: load, chaos, cluster, soak, footprint, gateway\n", o.mode)
		return 2
	}
}
