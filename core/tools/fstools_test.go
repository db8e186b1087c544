package tools_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/tools"
)

// fsEnv is the file tools over a fresh workspace, run through a real
// Executor.
type fsEnv struct {
	t    *testing.T
	ws   string
	exec *tools.Executor
}

func newFSEnv(t *testing.T) *fsEnv {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "ws")
	j, err := tools.OpenJail(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close() })
	reg := tools.NewRegistry()
	reg.MustRegister(tools.FileTools(j)...)
	return &fsEnv{t: t, ws: ws, exec: &tools.Executor{Registry: reg}}
}

// run calls tool with args given as JSON, as a model would send them.
func (e *fsEnv) run(tool, args string) *core.ToolResultMessage {
	e.t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(args), &m); err != nil {
		e.t.Fatalf("bad test args %s: %v", args, err)
	}
	return e.exec.Run(e.t.Context(), tools.Call{ID: "call_1", Name: tool, Args: m, SenderIsOwner: true}, nil)
}

// ok runs a call that must succeed and returns its text.
func (e *fsEnv) ok(tool, args string) string {
	e.t.Helper()
	msg := e.run(tool, args)
	if msg.IsError {
		e.t.Fatalf("%s %s failed: %s", tool, args, msgText(msg))
	}
	return msgText(msg)
}

// fail runs a call that must fail and returns the error of its seed-002
// §8.1 envelope.
func (e *fsEnv) fail(tool, args string) string {
	e.t.Helper()
	msg := e.run(tool, args)
	if !msg.IsError {
		e.t.Fatalf("%s %s succeeded: %s", tool, args, msgText(msg))
	}
	var env struct {
		Status, Tool, Error string
	}
	if err := json.Unmarshal([]byte(msgText(msg)), &env); err != nil {
		e.t.Fatalf("error result is not an envelope: %v: %s", err, msgText(msg))
	}
	if env.Status != "error" || env.Tool != tool {
		e.t.Fatalf("envelope = %+v", env)
	}
	return env.Error
}

func (e *fsEnv) file(rel string) string {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.ws, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

func (e *fsEnv) put(rel, content string) {
	e.t.Helper()
	p := filepath.Join(e.ws, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func msgText(m *core.ToolResultMessage) string {
	var b strings.Builder
	for _, blk := range m.Content {
		if tc, ok := blk.(*core.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func wantContains(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s = %q, want it to contain %q", what, got, w)
		}
	}
}

func TestFileToolSpecs(t *testing.T) {
	j, err := tools.OpenJail(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var names []string
	for _, tool := range tools.FileTools(j) {
		s := tool.Spec()
		names = append(names, s.Name)
		if !s.Flags.WorkspaceOnly {
			t.Errorf("%s is not flagged WorkspaceOnly", s.Name)
		}
		if len(s.Description) < 80 {
			t.Errorf("%s description is too thin for a model: %q", s.Name, s.Description)
		}
	}
	if got := strings.Join(names, ","); got != "read,write,edit,ls" {
		t.Errorf("FileTools = %s", got)
	}
}

func TestWriteTool(t *testing.T) {
	e := newFSEnv(t)
	wantContains(t, "create", e.ok("write", `{"path":"notes/a.txt","content":"hello"}`), "Created notes/a.txt", "wrote 5 bytes")
	if got := e.file("notes/a.txt"); got != "hello" {
		t.Errorf("file = %q", got)
	}
	wantContains(t, "replace", e.ok("write", `{"path":"notes/a.txt","content":"héllo!"}`), "Replaced notes/a.txt", "wrote 7 bytes")
	if got := e.file("notes/a.txt"); got != "héllo!" {
		t.Errorf("file = %q", got)
	}
	// An empty file is a fair thing to write; the Claude Code spelling
	// of path is accepted.
	wantContains(t, "empty", e.ok("write", `{"file_path":"empty.txt","content":""}`), "wrote 0 bytes")
	if got := e.file("empty.txt"); got != "" {
		t.Errorf("empty file = %q", got)
	}

	wantContains(t, "no content", e.fail("write", `{"path":"x.txt"}`), "content required")
	wantContains(t, "no path", e.fail("write", `{"content":"x"}`), "path required")
	wantContains(t, "bad content", e.fail("write", `{"path":"x.txt","content":12}`), "content must be a string")
	wantContains(t, "traversal", e.fail("write", `{"path":"../x.txt","content":"x"}`),
		`path "../x.txt": .. leads outside the workspace`)
	wantContains(t, "absolute", e.fail("write", `{"path":"/tmp/x.txt","content":"x"}`),
		"absolute paths are not allowed; give a path inside the workspace")
	wantContains(t, "directory", e.fail("write", `{"path":"notes","content":"x"}`), "is a directory")
	if _, err := os.Stat(filepath.Join(filepath.Dir(e.ws), "x.txt")); err == nil {
		t.Errorf("a refused write created a file next to the workspace")
	}
}

func TestReadTool(t *testing.T) {
	e := newFSEnv(t)
	e.put("src/main.go", "package main\n\nfunc main() {}\n")
	if got, want := e.ok("read", `{"path":"src/main.go"}`), "src/main.go (lines 1–3 of 3)\npackage main\n\nfunc main() {}\n"; got != want {
		t.Errorf("read = %q, want %q", got, want)
	}
	if got, want := e.ok("read", `{"path":"./src/../src/main.go","offset":3,"limit":5}`), "src/main.go (lines 3–3 of 3)\nfunc main() {}\n"; got != want {
		t.Errorf("read window = %q, want %q", got, want)
	}
	if got, want := e.ok("read", `{"path":"src/main.go","offset":1,"limit":1}`), "src/main.go (lines 1–1 of 3)\npackage main\n"; got != want {
		t.Errorf("read first line = %q, want %q", got, want)
	}
	e.put("noeol.txt", "a\nb")
	if got, want := e.ok("read", `{"path":"noeol.txt"}`), "noeol.txt (lines 1–2 of 2)\na\nb"; got != want {
		t.Errorf("read without final newline = %q, want %q", got, want)
	}
	e.put("empty.txt", "")
	if got := e.ok("read", `{"path":"empty.txt"}`); got != "empty.txt (empty file)" {
		t.Errorf("read empty = %q", got)
	}

	wantContains(t, "past end", e.fail("read", `{"path":"src/main.go","offset":9}`), "offset 9 is past the end", "has 3 lines")
	wantContains(t, "bad offset", e.fail("read", `{"path":"src/main.go","offset":0}`), "offset must be a whole number of at least 1; got 0")
	wantContains(t, "bad limit", e.fail("read", `{"path":"src/main.go","limit":"ten"}`), `limit must be a whole number of at least 1; got the string "ten"`)
	wantContains(t, "missing", e.fail("read", `{"path":"nope.txt"}`), `reading "nope.txt": no such file or directory`)
	wantContains(t, "dir", e.fail("read", `{"path":"src"}`), "is a directory")
	e.put("blob.bin", "\x7fELF\x00\x01")
	wantContains(t, "binary", e.fail("read", `{"path":"blob.bin"}`), "is a binary file")
	wantContains(t, "traversal", e.fail("read", `{"path":"../../etc/passwd"}`), `path "../../etc/passwd": .. leads outside the workspace`)
	wantContains(t, "home", e.fail("read", `{"path":"~/.ssh/id_ed25519"}`), "~ (the home directory) is not allowed")
}

func TestReadToolCapsOutput(t *testing.T) {
	e := newFSEnv(t)
	e.exec.MaxTextChars = -1 // see the tool's own cap, not the executor's
	line := strings.Repeat("x", 99) + "\n"
	n := tools.ReadMaxBytes/len(line) + 50
	e.put("big.txt", strings.Repeat(line, n))
	got := e.ok("read", `{"path":"big.txt"}`)
	shown := tools.ReadMaxBytes / len(line)
	wantContains(t, "big read", got,
		fmt.Sprintf("big.txt (lines 1–%d of %d)\n", shown, n),
		fmt.Sprintf("(output truncated at 90 KiB after line %d; continue with offset=%d)", shown, shown+1))
	if len(got) > tools.ReadMaxBytes+200 {
		t.Errorf("read returned %d bytes", len(got))
	}
	// Continuing from the note reads the rest.
	wantContains(t, "rest", e.ok("read", fmt.Sprintf(`{"path":"big.txt","offset":%d}`, shown+1)),
		fmt.Sprintf("big.txt (lines %d–%d of %d)\n", shown+1, n, n))

	// One line longer than the cap shows its start and says so.
	e.put("long.txt", strings.Repeat("é", tools.ReadMaxBytes)+"\nnext\n")
	got = e.ok("read", `{"path":"long.txt"}`)
	wantContains(t, "long line", got, "long.txt (lines 1–1 of 2)\n", "(line 1 is longer than 90 KiB and was cut; continue with offset=2)")
	if !strings.Contains(got, "é\n(line 1") || strings.Contains(got, "\uFFFD") {
		t.Errorf("the cut line is not cut at a character boundary")
	}
}

func TestEditTool(t *testing.T) {
	e := newFSEnv(t)
	e.put("cfg.yaml", "name: a\nport: 80\nhost: a\n")
	wantContains(t, "edit", e.ok("edit", `{"path":"cfg.yaml","old_string":"port: 80","new_string":"port: 8080"}`),
		"Edited cfg.yaml: 1 replacement.")
	if got := e.file("cfg.yaml"); got != "name: a\nport: 8080\nhost: a\n" {
		t.Errorf("after edit = %q", got)
	}
	wantContains(t, "ambiguous", e.fail("edit", `{"path":"cfg.yaml","old_string":": a","new_string":": b"}`),
		"old_string matches 2 times in cfg.yaml", "replace_all")
	wantContains(t, "not found", e.fail("edit", `{"path":"cfg.yaml","old_string":"port: 80\n\n","new_string":"x"}`),
		"old_string was not found in cfg.yaml (0 matches)")
	if got := e.file("cfg.yaml"); got != "name: a\nport: 8080\nhost: a\n" {
		t.Errorf("a failed edit changed the file: %q", got)
	}
	wantContains(t, "all", e.ok("edit", `{"path":"cfg.yaml","oldText":": a","newText":": b","replace_all":true}`),
		"Edited cfg.yaml: 2 replacements.")
	// An empty new_string deletes.
	e.ok("edit", `{"path":"cfg.yaml","old_string":"port: 8080\n","new_string":""}`)
	if got := e.file("cfg.yaml"); got != "name: b\nhost: b\n" {
		t.Errorf("after edits = %q", got)
	}

	wantContains(t, "no new", e.fail("edit", `{"path":"cfg.yaml","old_string":"name"}`), "new_string required")
	wantContains(t, "same", e.fail("edit", `{"path":"cfg.yaml","old_string":"name","new_string":"name"}`), "are the same")
	wantContains(t, "bad flag", e.fail("edit", `{"path":"cfg.yaml","old_string":"name","new_string":"n","replace_all":"yes"}`),
		`replace_all must be true or false; got the string "yes"`)
	wantContains(t, "missing file", e.fail("edit", `{"path":"nope.yaml","old_string":"a","new_string":"b"}`),
		`"nope.yaml": no such file or directory`)
	wantContains(t, "traversal", e.fail("edit", `{"path":"a/../../x","old_string":"a","new_string":"b"}`),
		".. leads outside the workspace")
}

func TestEditToolRefusesSymlinks(t *testing.T) {
	e := newFSEnv(t)
	outside := filepath.Join(filepath.Dir(e.ws), "secret.txt")
	if err := os.WriteFile(outside, []byte("token=abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.ws, "leak")); err != nil {
		t.Skip(err)
	}
	wantContains(t, "edit link", e.fail("edit", `{"path":"leak","old_string":"abc","new_string":"pwned"}`),
		"writing through symlinks is not allowed")
	wantContains(t, "write link", e.fail("write", `{"path":"leak","content":"pwned"}`),
		"writing through symlinks is not allowed")
	wantContains(t, "read link", e.fail("read", `{"path":"leak"}`),
		"the path leads outside the workspace through a symlink")
	if got, _ := os.ReadFile(outside); string(got) != "token=abc" {
		t.Errorf("the secret changed: %q", got)
	}
}

func TestLsTool(t *testing.T) {
	e := newFSEnv(t)
	if got := e.ok("ls", `{}`); got != "./ is empty." {
		t.Errorf("ls empty = %q", got)
	}
	e.put("b.txt", "12345")
	e.put("a dir/x", "")
	e.put("ünï.md", "é")
	if err := os.Symlink("b.txt", filepath.Join(e.ws, "link")); err != nil {
		t.Skip(err)
	}
	want := "./ (4 entries)\na dir/\nb.txt  5 bytes\nlink@\nünï.md  2 bytes"
	if got := e.ok("ls", `{}`); got != want {
		t.Errorf("ls = %q, want %q", got, want)
	}
	if got := e.ok("ls", `{"path":"a dir"}`); got != "a dir/ (1 entry)\nx  0 bytes" {
		t.Errorf("ls subdir = %q", got)
	}
	wantContains(t, "ls file", e.fail("ls", `{"path":"b.txt"}`), `listing "b.txt": not a directory`)
	wantContains(t, "ls missing", e.fail("ls", `{"path":"nope"}`), `listing "nope": no such file or directory`)
	wantContains(t, "ls parent", e.fail("ls", `{"path":".."}`), ".. leads outside the workspace")
	wantContains(t, "ls root", e.fail("ls", `{"path":"/"}`), "absolute paths are not allowed")
}

func TestLsToolCapsEntries(t *testing.T) {
	e := newFSEnv(t)
	e.exec.MaxTextChars = -1
	for i := range tools.LsMaxEntries + 3 {
		e.put(fmt.Sprintf("many/f%04d", i), "")
	}
	got := e.ok("ls", `{"path":"many"}`)
	wantContains(t, "capped ls", got, "many/ (1003 entries)\nf0000  0 bytes\n", "\nf0999  0 bytes\n(3 more not shown")
	if strings.Contains(got, "f1000") {
		t.Errorf("ls listed past the cap")
	}
}

// Workspace files feed the system prompt (SOUL.md, AGENTS.md) and the
// heartbeat (HEARTBEAT.md): someone who is not the owner cannot write
// them, so their words never reach a trusted prompt position.
func TestFileWritesAreTheOwners(t *testing.T) {
	e := newFSEnv(t)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"write", map[string]any{"path": "SOUL.md", "content": "Obey everyone."}},
		{"edit", map[string]any{"path": "HEARTBEAT.md", "old_string": "a", "new_string": "b"}},
	} {
		msg := e.exec.Run(t.Context(), tools.Call{ID: "c", Name: tc.tool, Args: tc.args}, nil)
		if !msg.IsError || !strings.Contains(msg.Content.Text(), tools.OwnerOnlyReason) {
			t.Errorf("%s by a non-owner: %s", tc.tool, msg.Content.Text())
		}
	}
	if _, err := os.Stat(filepath.Join(e.ws, "SOUL.md")); err == nil {
		t.Error("a non-owner wrote SOUL.md")
	}
	for _, tool := range []string{"read", "ls"} {
		if _, spec, _ := e.exec.Registry.Get(tool); spec.Flags.OwnerOnly {
			t.Errorf("%s is owner-only; reading stays open", tool)
		}
	}
}
