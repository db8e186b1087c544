package exectool_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
	"github.com/switchboardhq/switchboard/core/tools/exectool"
)

// The tests named TestFinding4_ are issue 22's finding 4, an attack on a
// running daemon at a3a0da1: under ask: unlisted, a program listed in
// allowBins ran without approval unless its name was on a list of shells
// and wrappers, so tar --checkpoint-action, flock, setsid, time, unshare
// and curl ran whatever the model asked. Each fails at a3a0da1.

// attack is one command of the finding and the allowBins it relied on.
type attack struct {
	allow   []string // the attacker's allowBins
	path    string   // tools.exec.path; "" is the default
	argv    []string // creates the file "pwned" when it runs
	refused string   // what refusing allowBins says
}

// mustAsk checks that a's command does not run unasked, whichever way:
// the tools refuse the allowBins (saying why), and with the entry left out
// the command asks, as every unlisted one does. The request is denied and
// nothing may have run. It returns the rig the command asked on.
func mustAsk(t *testing.T, a attack) *rig {
	t.Helper()
	for _, p := range a.allow {
		need(t, filepath.Base(p))
	}
	cfg := exectool.Config{Ask: exectool.AskUnlisted, AllowBins: a.allow, Path: a.path}
	r, err := openRig(t, cfg)
	if err != nil {
		if !strings.Contains(err.Error(), a.refused) {
			t.Fatalf("allowBins %q refused with %q; want it to say %q", a.allow, err, a.refused)
		}
		cfg.AllowBins = []string{"echo"}
		r = newRig(t, cfg)
	}
	r.deniedRun(argv(a.argv...))
	if _, err := os.Stat(filepath.Join(r.ws, "pwned")); err == nil {
		t.Fatalf("%q ran although the operator denied it", a.argv)
	}
	return r
}

// need returns the real path of prog in the default path, and skips the
// test when it is not installed.
func need(t *testing.T, prog string) string {
	t.Helper()
	for _, dir := range filepath.SplitList(exectool.DefaultPath) {
		real, err := filepath.EvalSymlinks(filepath.Join(dir, prog))
		if fi, serr := os.Stat(real); err == nil && serr == nil && fi.Mode()&0o111 != 0 {
			return real
		}
	}
	t.Skipf("%s is not installed in %s", prog, exectool.DefaultPath)
	return ""
}

func TestFinding4_TarCheckpointActionNeedsApproval(t *testing.T) {
	cmd := []string{"tar", "-cf", "out.tar", "--checkpoint=1", "--checkpoint-action=exec=touch pwned", "."}
	r := mustAsk(t, attack{allow: []string{"ls", "tar"}, argv: cmd,
		refused: "allowBins[1]: tar cannot run without approval: it can run other programs (--checkpoint-action=exec"})
	// Nothing a user needs is lost: approved, tar runs, checkpoint action
	// and all.
	if _, m := r.approveRun(argv(cmd...)); m.IsError {
		t.Fatalf("approved tar: %s", m.Content.Text())
	}
	if _, err := os.Stat(filepath.Join(r.ws, "pwned")); err != nil {
		t.Fatalf("approved tar did not run: %v", err)
	}
}

func TestFinding4_FlockSetsidTimeUnshareNeedApproval(t *testing.T) {
	for _, tc := range []struct {
		prog string
		argv []string
	}{
		{"flock", []string{"flock", "lockfile", "touch", "pwned"}},
		{"setsid", []string{"setsid", "-w", "touch", "pwned"}},
		{"time", []string{"time", "touch", "pwned"}},
		{"unshare", []string{"unshare", "touch", "pwned"}},
	} {
		t.Run(tc.prog, func(t *testing.T) {
			mustAsk(t, attack{allow: []string{tc.prog}, argv: tc.argv,
				refused: tc.prog + " cannot run without approval: it runs the command given in its arguments"})
		})
	}
}

// The operand check looked for paths, not for a command line handed to a
// shell behind a listed wrapper.
func TestFinding4_ShDashCBehindAWrapperNeedsApproval(t *testing.T) {
	for _, tc := range []struct {
		prog string
		argv []string
	}{
		{"flock", []string{"flock", "lockfile", "-c", "touch pwned"}},
		{"setsid", []string{"setsid", "-w", "sh", "-c", "touch pwned"}},
		{"time", []string{"time", "sh", "-c", "touch pwned"}},
		{"unshare", []string{"unshare", "sh", "-c", "touch pwned"}},
	} {
		t.Run(tc.prog, func(t *testing.T) {
			mustAsk(t, attack{allow: []string{tc.prog}, argv: tc.argv, refused: tc.prog + " cannot run without approval"})
		})
	}
}

// curl reached 127.0.0.1, which the egress rules keep the daemon's own
// fetches from, with nobody asked.
func TestFinding4_CurlIsNotAutoRun(t *testing.T) {
	hits := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hits <- r.URL.Path:
		default:
		}
		io.WriteString(w, "internal")
	}))
	defer srv.Close()
	mustAsk(t, attack{allow: []string{"curl"}, argv: []string{"curl", "-s", "-o", "pwned", srv.URL + "/admin"},
		refused: "curl cannot run without approval: it reaches the network"})
	select {
	case p := <-hits:
		t.Fatalf("curl reached %s%s", srv.URL, p)
	default:
	}
}

// The decision went by the name of the file the name resolved to; an
// allowlist by name must also check that the file is that program.
func TestFinding4_AllowBinsMustBeTheProgramItNames(t *testing.T) {
	bin := t.TempDir()
	link := func(name, target string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	setsid := need(t, "setsid")
	link("ls", setsid)
	link("cat", "/bin/sh")
	// A script is its interpreter running; this one is a wrapper.
	if err := os.WriteFile(filepath.Join(bin, "head"), []byte("#!/bin/sh\nexec \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := bin + ":" + exectool.DefaultPath
	for _, tc := range []struct {
		name    string
		argv    []string
		refused string
	}{
		{"ls is setsid", []string{"ls", "-w", "touch", "pwned"}, "allowBins[0]: ls resolves to " + setsid + ", another program"},
		{"cat is sh", []string{"cat", "-c", "touch pwned"}, "allowBins[0]: cat resolves to"},
		{"head is a script", []string{"head", "touch", "pwned"}, "is a script"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mustAsk(t, attack{allow: []string{tc.argv[0]}, path: path, argv: tc.argv, refused: tc.refused})
		})
	}
}

// A program in allowBins that lives in the workspace could be rewritten by
// the agent (the write tool) and then run unasked.
func TestFinding4_AllowBinsInTheWorkspaceAreRefused(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, err := os.ReadFile(need(t, "cat"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "bin", "cat"), real, 0o755); err != nil {
		t.Fatal(err)
	}
	jail, err := tools.OpenJail(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer jail.Close()
	cfg := exectool.Config{Enabled: true, Ask: exectool.AskUnlisted, AllowBins: []string{"cat"}, Path: filepath.Join(ws, "bin")}
	x, err := exectool.New(cfg, jail, nil)
	if err == nil {
		x.Close()
		t.Fatal("a program in the workspace was accepted to run unasked")
	}
	if !strings.Contains(err.Error(), "inside the workspace") {
		t.Fatalf("error: %v", err)
	}
	// Under ask: always every command asks, so it may be listed.
	cfg.Ask = exectool.AskAlways
	if x, err = exectool.New(cfg, jail, nil); err != nil {
		t.Fatalf("ask: always: %v", err)
	}
	x.Close()
}

// allowBins entries that are not known to be safe unasked are refused at
// load (switchboard config check, daemon start) with a positioned error
// that names the entry and says why; under ask: always any may be listed.
func TestFinding4_AllowBinsRefusedAtLoad(t *testing.T) {
	for _, tc := range []struct {
		ask   string
		allow []string
		path  string // "" when accepted
		want  string
	}{
		{exectool.AskUnlisted, []string{"ls", "cat", "tar"}, "allowBins[2]",
			"tar cannot run without approval: it can run other programs (--checkpoint-action=exec, --to-command, --use-compress-program, --info-script); " +
				"remove it from allowBins and it runs once an operator approves"},
		{exectool.AskUnlisted, []string{"flock"}, "allowBins[0]", "flock cannot run without approval: it runs the command given in its arguments"},
		{exectool.AskUnlisted, []string{"setsid"}, "allowBins[0]", "it runs the command given in its arguments"},
		{exectool.AskUnlisted, []string{"/usr/bin/time"}, "allowBins[0]", "time cannot run without approval: it runs the command given in its arguments"},
		{exectool.AskUnlisted, []string{"unshare"}, "allowBins[0]", "it runs the command given in its arguments"},
		{exectool.AskUnlisted, []string{"grep", "curl"}, "allowBins[1]", "curl cannot run without approval: it reaches the network, past the egress rules"},
		{exectool.AskUnlisted, []string{"/bin/sh"}, "allowBins[0]", "sh cannot run without approval: it is a shell"},
		{exectool.AskUnlisted, []string{"env"}, "allowBins[0]", "it runs the command given in its arguments"},
		{exectool.AskUnlisted, []string{"python3"}, "allowBins[0]", "it runs the code or scripts it is given"},
		{exectool.AskUnlisted, []string{"sed"}, "allowBins[0]", "the e command"},
		{exectool.AskUnlisted, []string{"jq"}, "allowBins[0]", "import, include"},
		{exectool.AskUnlisted, []string{"find"}, "allowBins[0]", "-exec"},
		{exectool.AskUnlisted, []string{"frobnicate"}, "allowBins[0]",
			"frobnicate cannot run without approval: it is not one of the programs known not to run other programs, reach the network or write files (b2sum, basename, cat,"},
		{exectool.AskUnlisted, []string{"ls", "/usr/bin/grep", "sort", "sha256sum", "date", "diff"}, "", ""},
		{exectool.AskAlways, []string{"tar", "curl", "sh", "frobnicate"}, "", ""},
		{"", []string{"tar"}, "", ""}, // the default is always
	} {
		err := exectool.Config{Ask: tc.ask, AllowBins: tc.allow}.Validate()
		if tc.path == "" {
			if err != nil {
				t.Errorf("ask %q, allowBins %q: %v", tc.ask, tc.allow, err)
			}
			continue
		}
		var fe *core.FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path || !strings.Contains(fe.Message, tc.want) {
			t.Errorf("ask %q, allowBins %q: got %v; want %s: …%s…", tc.ask, tc.allow, err, tc.path, tc.want)
		}
	}
}
