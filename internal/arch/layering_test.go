package arch_test

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/switchboardhq/switchboard"

// allowedImports is every import of one package of this module by another
// (non-test files), with its reason. Dependencies point down the
// architecture's table: core imports nothing of ours; the bridge contract
// and its adapters know nothing of the daemon; the daemon's glue (channels,
// queue, gateway, heartbeat) sits above them; cmd wires it all. A new edge
// is a design decision: add it here with why, or restructure.
var allowedImports = map[string]map[string]string{
	"core": {},
	"core/llm": {
		"core":        "providers stream core's message model",
		"core/prompt": "the echo model answers with the user's own words, stripped of the prompt's metadata as for display",
	},
	"core/llm/llmtest": {
		"core":     "fake providers answer in core's message model",
		"core/llm": "the fakes implement llm.Provider and speak its wire formats",
	},
	"core/prompt":     {"core": "prompts are built from core.Inbound and its metadata"},
	"core/reply":      {"core": "reply directives produce core.ReplyPayload"},
	"core/transcript": {"core": "transcripts store core's messages"},
	"core/tools": {
		"core":   "tools see core's call and result types",
		"egress": "web_fetch reaches the network only through the egress policy",
	},
	"core/tools/exectool":  {"core": "exec reports through core's types", "core/tools": "exec is a tool"},
	"core/tools/toolstest": {"core/tools": "fake tools for tests"},
	"core/agent": {
		"core":            "the agent loop runs on core's message model",
		"core/llm":        "the agent streams from a provider",
		"core/prompt":     "the agent assembles the prompt",
		"core/reply":      "the agent turns the answer into reply payloads",
		"core/tools":      "the agent runs tools",
		"core/transcript": "the agent keeps transcripts",
	},
	"egress": {},
	"store":  {"core": "the store persists core's sessions and inbound messages"},
	"store/postgres": {
		"core":             "the store persists core's sessions and inbound messages",
		"core/transcript":  "transcripts are kept in the database in postgres mode",
		"store":            "it implements package store's interfaces and shares its migration loader and errors",
		"store/migrations": "its schema is the postgres folder of the migrations",
	},
	"store/storetest": {
		"core":            "the suites build core's sessions and inbound messages",
		"core/transcript": "the transcript suite asserts transcript.Store",
		"store":           "the conformance suites assert package store's interfaces",
	},
	"cluster": {
		"core":  "session leases are named by core.SessionKey",
		"store": "leases and the instance registry are kept in the store",
	},
	"internal/arch":    {},
	"internal/suggest": {},
	"e2e":              {},
	"bridges/markup":   {},
	"bridges": {
		"core":             "the contract carries core.Inbound and core.Route",
		"egress":           "media helpers download through the egress policy",
		"internal/suggest": "a misspelt channel in a target gets a did-you-mean",
	},
	"bridges/bridgetest": {"bridges": "a recording Sink and waits for bridges' tests and fakes"},
	"queue": {
		"core":            "the dispatcher queues core.Inbound",
		"core/agent":      "the dispatcher runs turns on the agent runner",
		"core/prompt":     "queued messages are folded into one prompt (collect)",
		"core/transcript": "interrupted turns are repaired in the transcript",
		"store":           "the journal is durable",
	},
	"queue/queuetest": {"queue": "a manual clock for the dispatcher's tests"},
	"channels": {
		"bridges":    "channels runs bridges: gates, routes and supervises them",
		"core":       "the gate hands core.Inbound to the dispatcher",
		"core/agent": "the typing observer sees how a run ended",
		"core/tools": "the message tool is a tool",
		"queue":      "accepted messages go to the dispatcher; replies come from it",
		"store":      "pairing codes and approvals are stored",
	},
	"heartbeat": {
		"core":        "heartbeat and cron turns are core.Inbound",
		"core/agent":  "a turn's result decides what is delivered",
		"core/prompt": "the heartbeat prompt and system events",
		"core/tools":  "the cron tool is a tool",
		"egress":      "cron webhooks go through the egress policy",
		"queue":       "heartbeat and cron turns enter through the dispatcher",
		"store":       "cron jobs and runs are stored",
	},
	"gateway/protocol": {},
	"gateway/auth":     {"gateway/protocol": "device auth speaks the protocol's connect frames"},
	"gateway/client":   {"gateway/auth": "the client signs its device identity", "gateway/protocol": "the client speaks the protocol"},
	"gateway/webui":    {},
	"gateway/events": {
		"core":       "agent events become chat and agent frames",
		"core/agent": "a run's result is its final event",
		"core/llm":   "stream events carry usage",
		"core/reply": "final replies are filtered as OpenClaw's are",
		"queue":      "events follow the dispatcher's runs",
	},
	"gateway": {
		"core":                "chat.send is a core.Inbound",
		"core/agent":          "sessions and transcripts through the runner",
		"core/llm":            "a relayed run's model error keeps its kind",
		"core/prompt":         "chat.inject writes prompt blocks",
		"core/reply":          "replies are filtered for clients",
		"core/tools/exectool": "exec approvals are resolved over the gateway",
		"core/transcript":     "chat.history reads transcripts",
		"gateway/auth":        "connect authenticates devices and tokens",
		"gateway/events":      "runs are streamed to clients",
		"gateway/protocol":    "the wire format",
		"gateway/webui":       "the web chat page is served at /",
		"heartbeat":           "heartbeat and cron methods",
		"queue":               "chat.send submits to the dispatcher",
		"store":               "devices, tokens and sessions are stored",
	},
	"config": {
		"bridges":             "channel sections embed bridges.Common and implement bridges.Section",
		"bridges/discord":     "channels.discord is the adapter's own Config",
		"bridges/slack":       "channels.slack is the adapter's own Config",
		"bridges/telegram":    "channels.telegram is the adapter's own Config",
		"bridges/whatsapp":    "channels.whatsapp is the adapter's own Config",
		"core":                "agent, session and heartbeat sections",
		"core/llm":            "the models section",
		"core/tools":          "tool names and owners are validated",
		"core/tools/exectool": "the tools.exec section",
		"gateway":             "the gateway section",
		"heartbeat":           "the cron section",
		"internal/suggest":    "unknown keys and enum values get a did-you-mean",
		"queue":               "the messages.queue section",
		"store":               "the store section",
	},
	"config/internal/docgen":  {},
	"config/internal/gendocs": {"config": "it generates config's field docs", "config/internal/docgen": "the generator"},
}

// bridgeSideAllowed are the module packages a bridge adapter's own
// package may import (besides its own platform library).
var bridgeSideAllowed = map[string]string{
	"bridges":        "the contract",
	"bridges/markup": "markdown to the platform's markup, chunking",
	"core":           "core.Inbound, core.Route, session keys",
}

// daemonOnly are what the bridge contract, every adapter and every
// platform fake must not depend on, even indirectly: importing one adapter
// must not compile the dispatcher, SQLite or the model clients.
var daemonOnly = []string{
	module + "/queue",
	module + "/store",
	module + "/core/agent",
	module + "/core/llm",
}

type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	Deps       []string
}

// declaresDescriptor reports a package that registers a bridge (a func
// Descriptor in its non-test files): a bridge adapter wherever it lives,
// such as examples/linebridge.
func (p listedPackage) declaresDescriptor(t *testing.T) bool {
	t.Helper()
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == "Descriptor" {
				return true
			}
		}
	}
	return false
}

// listPackages runs go list over the module.
func listPackages(t *testing.T, root string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,Imports,Deps", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// local is a module package's path relative to the module, ok false for
// any other package.
func local(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	return strings.CutPrefix(path, module+"/")
}

// bridgeAdapter reports an adapter package: bridges/<platform>.
func bridgeAdapter(rel string) bool {
	parts := strings.Split(rel, "/")
	return len(parts) == 2 && parts[0] == "bridges" && parts[1] != "markup" && parts[1] != "bridgetest"
}

// platformFake reports a platform fake: bridges/<platform>/<platform>test.
func platformFake(rel string) bool {
	parts := strings.Split(rel, "/")
	return len(parts) == 3 && parts[0] == "bridges" && parts[2] == parts[1]+"test"
}

// TestImportsFollowTheLayering fails for an import of one module package
// by another that allowedImports (or, for an adapter, bridgeSideAllowed)
// does not list, and for a listed edge no file uses any more.
func TestImportsFollowTheLayering(t *testing.T) {
	pkgs := listPackages(t, moduleRoot(t))
	used := map[string]bool{}
	var findings []string
	for _, p := range pkgs {
		from, _ := local(p.ImportPath)
		table, known := allowedImports[from]
		switch {
		case bridgeAdapter(from) || p.declaresDescriptor(t):
			table, known = bridgeSideAllowed, true
		case platformFake(from):
			table, known = map[string]string{
				"bridges/bridgetest": "the fakes' owner (TB) and waits",
				path.Dir(from):       "a fake may share its own adapter's exported types",
			}, true
		case strings.HasPrefix(from, "cmd/") || strings.HasPrefix(from, "examples/"):
			continue // programs wire everything; they are nobody's dependency
		}
		for _, imp := range p.Imports {
			to, ok := local(imp)
			if !ok {
				continue
			}
			if !known {
				findings = append(findings, from+" (not in allowedImports) imports "+to)
				continue
			}
			if _, ok := table[to]; !ok {
				findings = append(findings, from+" imports "+to)
				continue
			}
			used[from+" "+to] = true
		}
	}
	slices.Sort(findings)
	if len(findings) > 0 {
		t.Errorf("imports outside the layering of docs/ARCHITECTURE.md; restructure, or add the edge to allowedImports with its reason:\n\t%s",
			strings.Join(findings, "\n\t"))
	}
	for from, table := range allowedImports {
		for to := range table {
			if !used[from+" "+to] {
				t.Errorf("allowedImports lets %s import %s, which it no longer does; remove the entry", from, to)
			}
		}
	}
}

// TestBridgeSideStaysFreeOfTheDaemon: go list -deps of the bridge
// contract, every adapter (any package that declares a Descriptor, the
// example's too), every platform fake and the bridges' test kit excludes
// the dispatcher, the store, the agent and the model clients.
func TestBridgeSideStaysFreeOfTheDaemon(t *testing.T) {
	pkgs := listPackages(t, moduleRoot(t))
	checked := 0
	for _, p := range pkgs {
		rel, _ := local(p.ImportPath)
		if !(rel == "bridges" || rel == "bridges/bridgetest" || rel == "bridges/markup" || bridgeAdapter(rel) || platformFake(rel) || p.declaresDescriptor(t)) {
			continue
		}
		checked++
		var found []string
		for _, bad := range daemonOnly {
			if slices.ContainsFunc(p.Deps, func(dep string) bool { return dep == bad || strings.HasPrefix(dep, bad+"/") }) {
				found = append(found, bad)
			}
		}
		if len(found) > 0 {
			t.Errorf("%s depends on %s (go list -deps); the bridge side must build without the daemon", rel, strings.Join(found, ", "))
		}
	}
	if checked < 12 {
		t.Errorf("checked %d bridge-side packages; want the contract, bridgetest, markup, 4 adapters, 4 fakes and the example bridge", checked)
	}
}
