package exectool

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/switchboardhq/switchboard/core/tools"
)

// Request is what the model asked exec to run.
type Request struct {
	// Argv is the program and its arguments, not interpreted by a shell.
	Argv []string
	// Command is a command line for the configured shell; exactly one of
	// Argv and Command is set.
	Command string
	// Cwd is the working directory relative to the workspace; "" means the
	// workspace.
	Cwd string
	// Env are variables to set on top of the base environment.
	Env map[string]string
}

// Plan is exactly what will run. It is built from a Request and the
// configuration, and the process is started from it alone.
type Plan struct {
	// Argv is the argument vector the program receives; Argv[0] is as the
	// model wrote it (or the shell's path).
	Argv []string
	// Path is the executable's real absolute path.
	Path string
	// Cwd is the working directory's real absolute path.
	Cwd string
	// Env is the whole environment, sorted.
	Env []string
	// Shell reports a command line run through the configured shell.
	Shell bool

	// binID and cwdID identify the executable and the directory (device,
	// inode; size and modification time for the executable).
	binID, cwdID string
}

// Hash is the hex SHA-256 of the plan's canonical encoding: every field,
// each length-prefixed, so two different plans never encode the same.
// Approvals are bound to it.
func (p *Plan) Hash() string {
	h := sha256.New()
	var n [8]byte
	put := func(s string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	putList := func(l []string) {
		binary.BigEndian.PutUint64(n[:], uint64(len(l)))
		h.Write(n[:])
		for _, s := range l {
			put(s)
		}
	}
	put("switchboard-exec-plan-v1")
	put(fmt.Sprint(p.Shell))
	putList(p.Argv)
	put(p.Path)
	put(p.binID)
	put(p.Cwd)
	put(p.cwdID)
	putList(p.Env)
	return hex.EncodeToString(h.Sum(nil))
}

// Command is the whole argv as one shell-quoted line, never shortened: what
// an approver is shown.
func (p *Plan) Command() string {
	parts := make([]string, len(p.Argv))
	for i, a := range p.Argv {
		parts[i] = shellQuote(a)
	}
	return strings.Join(parts, " ")
}

// EnvKeys are the names of the plan's variables.
func (p *Plan) EnvKeys() []string {
	keys := make([]string, len(p.Env))
	for i, kv := range p.Env {
		keys[i], _, _ = strings.Cut(kv, "=")
	}
	return keys
}

// shellQuote quotes a for a POSIX shell when it needs it.
func shellQuote(a string) string {
	if a != "" && strings.IndexFunc(a, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == ':' || r == '=' || r == ',' || r == '+' || r == '@' || r == '%' ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// ErrPlan is what every planning error matches with errors.Is.
var ErrPlan = errors.New("exec: command refused")

// planError is a refused request, worded for the model.
type planError struct{ msg string }

func (e *planError) Error() string        { return e.msg }
func (e *planError) Is(target error) bool { return target == ErrPlan }

func refuse(format string, args ...any) error {
	return &planError{msg: fmt.Sprintf(format, args...)}
}

// planner turns requests into plans.
type planner struct {
	cfg       Config
	jail      *tools.Jail
	workspace string   // real path
	baseEnv   []string // PATH, HOME, LANG and passEnv
}

func newPlanner(cfg Config, jail *tools.Jail, environ func(string) (string, bool)) *planner {
	pl := &planner{cfg: cfg, jail: jail, workspace: jail.RealDir()}
	pl.baseEnv = []string{"PATH=" + cfg.Path, "HOME=" + pl.workspace, "LANG=C.UTF-8"}
	for _, name := range cfg.PassEnv {
		if v, ok := environ(name); ok {
			pl.baseEnv = append(pl.baseEnv, name+"="+v)
		}
	}
	return pl
}

// plan builds the plan of req; the error matches ErrPlan and says what to
// change.
func (pl *planner) plan(req Request) (*Plan, error) {
	p := &Plan{}
	switch {
	case len(req.Argv) > 0 && req.Command != "":
		return nil, refuse("give argv or command, not both")
	case req.Command != "":
		if pl.cfg.Shell == "" {
			return nil, refuse("command strings need a shell, and tools.exec.shell is not set; pass the program and its arguments as argv")
		}
		p.Shell = true
		p.Argv = []string{pl.cfg.Shell, "-c", req.Command}
	case len(req.Argv) == 0 || req.Argv[0] == "":
		return nil, refuse("argv is empty; give the program and its arguments, such as [\"ls\", \"-l\"]")
	default:
		p.Argv = slices.Clone(req.Argv)
	}
	for _, a := range p.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, refuse("argv contains a NUL byte")
		}
	}
	cwd, cwdInfo, err := pl.cwd(req.Cwd)
	if err != nil {
		return nil, err
	}
	p.Cwd, p.cwdID = cwd, fileIdentity(cwdInfo, false)
	path, binInfo, err := pl.lookPath(p.Argv[0], cwd)
	if err != nil {
		return nil, err
	}
	p.Path, p.binID = path, fileIdentity(binInfo, true)
	if *pl.cfg.WorkspaceOnly && !p.Shell {
		if err := pl.checkOperands(p.Argv[1:], cwd); err != nil {
			return nil, err
		}
	}
	env := slices.Clone(pl.baseEnv)
	for k, v := range req.Env {
		if !envName.MatchString(k) {
			return nil, refuse("env: %q is not a variable name", k)
		}
		if forbiddenEnv(k) {
			return nil, refuse("env: %s cannot be set: it changes which code runs", k)
		}
		if strings.IndexByte(v, 0) >= 0 {
			return nil, refuse("env: %s contains a NUL byte", k)
		}
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	p.Env = env
	return p, nil
}

// cwd resolves the working directory inside the workspace.
func (pl *planner) cwd(rel string) (string, fs.FileInfo, error) {
	if rel == "" {
		rel = "."
	}
	clean, err := pl.jail.Clean(rel)
	if err != nil {
		return "", nil, refuse("cwd: %v", err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(pl.workspace, filepath.FromSlash(clean)))
	if err != nil {
		return "", nil, refuse("cwd %q: %v", rel, errors.Unwrap(err))
	}
	if !within(pl.workspace, real) {
		return "", nil, refuse("cwd %q leads outside the workspace through a symlink", rel)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", nil, refuse("cwd %q: %v", rel, err)
	}
	if !fi.IsDir() {
		return "", nil, refuse("cwd %q is not a directory", rel)
	}
	return real, fi, nil
}

// lookPath finds name in the configured PATH (or, with a slash, relative
// to cwd) and returns its real path.
func (pl *planner) lookPath(name, cwd string) (string, fs.FileInfo, error) {
	var candidates []string
	if strings.ContainsRune(name, '/') {
		if filepath.IsAbs(name) {
			candidates = []string{name}
		} else {
			candidates = []string{filepath.Join(cwd, name)}
		}
	} else {
		for _, dir := range filepath.SplitList(pl.cfg.Path) {
			candidates = append(candidates, filepath.Join(dir, name))
		}
	}
	for _, c := range candidates {
		real, err := filepath.EvalSymlinks(c)
		if err != nil {
			continue
		}
		fi, err := os.Stat(real)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}
		return real, fi, nil
	}
	if strings.ContainsRune(name, '/') {
		return "", nil, refuse("%q is not an executable file", name)
	}
	return "", nil, refuse("program %q not found in %s (tools.exec.path)", name, pl.cfg.Path)
}

// checkOperands refuses arguments that name a path outside the workspace:
// absolute paths, ".." out of it, and symlinks (anywhere along the path)
// that lead out, like `cat leak/secret` with leak -> /etc. Besides plain
// operands it checks the value of --flag=value and name=value (dd
// if=/etc/shadow), a path glued to a short flag (-f/etc/x), @file (curl -d
// @/etc/passwd) and file:// URLs. It guards against mistakes; a program
// can still open paths it computes itself, so the approval stays the
// boundary.
func (pl *planner) checkOperands(args []string, cwd string) error {
	for _, a := range args {
		for _, v := range operandPaths(a) {
			lexical := v
			if !filepath.IsAbs(lexical) {
				lexical = filepath.Join(cwd, lexical)
			}
			if !within(pl.workspace, filepath.Clean(lexical)) {
				return refuse("operand %q names a path outside the workspace; commands may only name files inside it (tools.exec.workspaceOnly)", a)
			}
			if !within(pl.workspace, resolvePath(cwd, v)) {
				return refuse("operand %q leads outside the workspace through a symlink", a)
			}
		}
	}
	return nil
}

// operandPaths returns the strings in one argument a program may take as a
// path.
func operandPaths(a string) []string {
	var out []string
	add := func(v string) {
		v = strings.TrimPrefix(v, "@")
		if len(v) >= 7 && strings.EqualFold(v[:7], "file://") {
			v = v[7:]
		}
		if v != "" {
			out = append(out, v)
		}
	}
	_, after, hasEq := strings.Cut(a, "=")
	switch {
	case a == "-" || a == "--":
	case strings.HasPrefix(a, "--"):
		if hasEq {
			add(after)
		}
	case strings.HasPrefix(a, "-"):
		if hasEq {
			add(after)
		} else if len(a) > 2 && strings.ContainsRune(a[2:], '/') {
			add(a[2:])
		}
	default:
		add(a)
		if hasEq {
			add(after)
		}
	}
	return out
}

// resolvePath resolves p (relative to dir unless absolute) the way the
// kernel does: component by component, each symlink followed before a
// later ".." applies. Components that do not exist are taken as they are.
// A dangling symlink or a loop resolves to "/", outside any workspace.
func resolvePath(dir, p string) string {
	cur := dir
	if filepath.IsAbs(p) {
		cur = string(filepath.Separator)
	}
	for _, comp := range strings.Split(filepath.ToSlash(p), "/") {
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		fi, err := os.Lstat(next)
		switch {
		case err != nil:
			cur = next // does not exist (yet): no symlink to follow
		case fi.Mode()&os.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(next)
			if err != nil {
				return string(filepath.Separator)
			}
			cur = real
		default:
			cur = next
		}
	}
	return cur
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
