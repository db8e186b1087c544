# Switchboard build, run and test targets. Needs Go (see go.mod); `make test`
# also needs a C compiler, because the race detector is always on.

GO            ?= go
BIN           := $(CURDIR)/bin
VERSION       ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS       := -s -w -X main.version=$(VERSION)
STATICCHECK_VERSION := v0.8.2
STATICCHECK   := $(BIN)/staticcheck-$(STATICCHECK_VERSION)
FUZZTIME      ?= 10s
# make run's configuration: ./config.yaml when there is one (git ignores it),
# else the example, which needs no keys.
CONFIG        ?= $(if $(wildcard config.yaml),config.yaml,config.yaml.example)

.PHONY: all build run test fmt-check vet staticcheck unit e2e openclaw screenshots bench fuzz footprint bench-e2e bench-gateway chaos chaos-cluster bench-cluster soak generate clean

all: build

## build: bin/switchboard, static (CGO_ENABLED=0), version from git.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/switchboard ./cmd/switchboard

## run: build and run the daemon with CONFIG: ./config.yaml if present, else
## config.yaml.example (echo model, no tokens needed).
run: build
	$(BIN)/switchboard run --config $(CONFIG)

## test: gofmt check, go vet, staticcheck, then every test with -race.
test: fmt-check vet staticcheck unit

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './bin/*')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

$(STATICCHECK):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv $(BIN)/staticcheck $(STATICCHECK)

staticcheck: $(STATICCHECK)
	$(STATICCHECK) ./...

unit:
	@command -v $$($(GO) env CC) >/dev/null 2>&1 || { echo "make test: the race detector needs a C compiler ($$($(GO) env CC)); install gcc or clang"; exit 1; }
	$(GO) test -race -shuffle=on ./...

## e2e: the end-to-end browser tests alone, installing Debian's chromium if missing.
e2e:
	scripts/install-chromium
	E2E_REQUIRE_BROWSER=1 $(GO) test -race -count=1 -v ./e2e

## screenshots: the page's pictures in docs/screenshots, made by the browser
## test TestScreenshots (1280 and 390 px, light and dark).
screenshots:
	scripts/screenshots

## openclaw: the OpenClaw compatibility suite alone (its CLI and TUI against
## the daemon, the method table in docs/OPENCLAW.md), installing Node.js 24
## and openclaw@OPENCLAW_VERSION into the user cache first.
openclaw:
	scripts/install-openclaw
	E2E_REQUIRE_OPENCLAW=1 $(GO) test -race -count=1 -run OpenClaw -v ./e2e

## bench: every benchmark, with allocations.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

## fuzz: each fuzz target for FUZZTIME (default 10s), one at a time.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$t"; \
			$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

## footprint: binary size, exec → /readyz, idle RSS with the Telegram, Slack
## and Discord bridges on their fakes, then RSS with CONNS idle gateway
## connections (Linux; results also in footprint.json).
CONNS         ?= 1000
footprint: build
	$(GO) run ./cmd/switchboard-bench -mode footprint -bin $(BIN)/switchboard -conns $(CONNS) -json footprint.json

## bench-e2e: SESSIONS × MESSAGES through the Telegram fake to a streaming
## model fake; fails on a lost, duplicated or reordered reply. Results in
## bench-e2e.json and bench-e2e.svg.
SESSIONS      ?= 100
MESSAGES      ?= 5
bench-e2e: build
	$(GO) run ./cmd/switchboard-bench -mode load -bin $(BIN)/switchboard -sessions $(SESSIONS) -messages $(MESSAGES) -json bench-e2e.json -svg bench-e2e.svg

## bench-gateway: gateway clients against the daemon's WebSocket (issue
## 22): GW_SESSIONS sessions, first a client each, then one client carrying
## them all, A B A B; fails when A reaches less than 90% of B's throughput.
## Then an 80 KB reply streamed to 10 clients following its session; fails
## on a disconnect or more than 30× the reply read by one. Results in
## bench-gateway.json.
GW_SESSIONS   ?= 100
GW_MESSAGES   ?= 5
GW_ROUNDS     ?= 3
bench-gateway: build
	$(GO) run ./cmd/switchboard-bench -mode gateway -bin $(BIN)/switchboard -sessions $(GW_SESSIONS) -messages $(GW_MESSAGES) -rounds $(GW_ROUNDS) -json bench-gateway.json

## chaos: SIGKILL the daemon KILLS times at random moments under load
## (20 sessions, a model that calls a tool in every turn) and restart it;
## fails on a lost or reordered message, more than one duplicate per kill,
## or a transcript that does not load. Results in chaos.json.
KILLS         ?= 200
chaos: build
	$(GO) run ./cmd/switchboard-bench -mode chaos -bin $(BIN)/switchboard -kills $(KILLS) -sessions 20 -latency 300ms -tps 40 -tokens 20 -tool -json chaos.json

## chaos-cluster: three instances on one PostgreSQL (started from Debian's
## postgresql binaries in a temporary directory), Telegram and Discord held
## by one instance each, Slack's Events API through a round-robin proxy to
## all; SIGKILL a random instance KILLS times (default 50 here) at random
## moments under load, restarting it 2 s later. Fails on a lost or reordered
## message, more than one duplicate per kill, a platform connection held by
## two instances at any 50 ms sample, or a transcript that does not load.
## Reports failover (kill → connection served again). Results in
## chaos-cluster.json.
chaos-cluster: build
	$(GO) run ./cmd/switchboard-bench -mode cluster -bin $(BIN)/switchboard -instances 3 -kills $(if $(filter command line environment,$(origin KILLS)),$(KILLS),50) -sessions 20 -latency 300ms -tps 40 -tokens 20 -lease-ttl 3s -json chaos-cluster.json

## bench-cluster: throughput of 1, 2 and 3 instances on one PostgreSQL,
## one after the other: 60 Slack sessions (the Events API through the
## round-robin proxy spreads them), a model that takes 1 s per answer, 2
## turns at once per instance, 30 s each. Results in
## cluster-throughput-<n>.json.
bench-cluster: build
	for n in 1 2 3; do $(GO) run ./cmd/switchboard-bench -mode cluster -bin $(BIN)/switchboard -instances $$n -kills 0 -run-for 30s \
		-platforms slack -sessions 60 -latency 1s -tokens 5 -max-concurrent 2 -json cluster-throughput-$$n.json || exit 1; done

## soak: RATE messages/s (default 5) over SOAK_SESSIONS chats for DURATION
## with a heartbeat every 30 s and a cron job every minute; reports latency
## percentiles and the RSS slope after the first 10 minutes. The model has
## an 8,192-token window, as a local model might, so sessions reach their
## steady state (compacting) within the warm-up. Results (with the RSS
## samples) in soak.json. `make soak DURATION=30s RATE=1000
## SOAK_SESSIONS=2000` measures intake latency at a steady 1,000/s.
DURATION      ?= 1h
RATE          ?= 5
SOAK_SESSIONS ?= 50
soak: build
	$(GO) run ./cmd/switchboard-bench -mode soak -bin $(BIN)/switchboard -duration $(DURATION) -rate $(RATE) -sessions $(SOAK_SESSIONS) -latency 200ms -tps 50 -tokens 20 -context-window 8192 -json soak.json

## generate: regenerate generated files (config field docs).
generate:
	$(GO) generate ./...

clean:
	rm -rf $(BIN)
