package exectool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// unaskedProgram is a program that ask: unlisted may run without an
// operator's approval, with the uses of it that still ask. A program is
// here only when it does not run other programs, does not reach the
// network and does not write files, whatever its arguments, once the
// options below are refused and every operand is inside the workspace.
// The options were checked against GNU coreutils, grep, diffutils and file
// (Debian 12); where a BSD program spells such an option differently
// (grep -S) that spelling is refused too.
type unaskedProgram struct {
	// long are the long options (without "--") that still ask. GNU
	// getopt_long takes any unambiguous abbreviation (--compress-prog),
	// so an option that is a prefix of one of these asks too.
	long []string
	// short are the one-letter options that still ask, found anywhere in
	// a cluster such as -sL (a letter that is really an option's value,
	// as in -eR, asks too: a needless question, never a missed one).
	short string
	// check, when set, looks at the whole argument list and returns why
	// the command asks, or "".
	check func(args []string, cwd string) string
}

// unaskedPrograms are the programs allowBins may list under ask: unlisted,
// by the name of the file that runs. Those that print their arguments or
// facts about the host (echo, printf, pwd, true, false, seq, uname, df,
// basename, dirname, realpath, readlink) and those that only read the
// files named as operands (cat, head, cut, tr, paste, comm, nl, tac, fold,
// od, cmp, stat) have nothing to refuse. Each entry with a refusal says
// why.
var unaskedPrograms = map[string]unaskedProgram{
	"basename": {}, "cat": {}, "cmp": {}, "comm": {}, "cut": {}, "df": {}, "dirname": {}, "echo": {}, "false": {},
	"fold": {}, "head": {}, "nl": {}, "od": {}, "paste": {}, "printf": {}, "pwd": {}, "readlink": {}, "realpath": {},
	"seq": {}, "stat": {}, "tac": {}, "tr": {}, "true": {}, "uname": {},
	// --files0-from reads the names of the files to count from a file,
	// unchecked.
	"wc": {long: []string{"files0-from"}},
	// -F and --follow=name reopen a file by name, so a file replaced by a
	// symlink later would be read through it.
	"tail": {long: []string{"follow", "retry"}, short: "F"},
	// -L follows symlinks inside the listed directories, out of the
	// workspace.
	"ls": {long: []string{"dereference"}, short: "L"},
	// -L follows symlinks while walking; --files0-from reads the names to
	// measure from a file, unchecked.
	"du": {long: []string{"dereference", "files0-from"}, short: "L"},
	// -R follows every symlink while walking (BSD grep: -S). Plain -r
	// does not, and -f FILE is an operand like any other.
	"grep": {long: []string{"dereference-recursive"}, short: "RS"},
	// --compress-program runs a program; --files0-from reads the files
	// named in a file; -o and -T write files.
	"sort": {long: []string{"compress-program", "files0-from", "output", "temporary-directory"}, short: "oT"},
	// uniq INPUT OUTPUT writes OUTPUT.
	"uniq": {check: func(args []string, _ string) string {
		if operands(args) > 1 {
			return "uniq with a second operand writes it"
		}
		return ""
	}},
	// -z and -Z run decompressors (gzip, xz…) when libmagic lacks them;
	// -f reads the names to examine from a file; -m reads magic from any
	// file; -C writes a compiled magic file.
	"file": {long: []string{"uncompress", "uncompress-noreport", "files-from", "magic-file", "compile"}, short: "zZfmC"},
	// -l pipes the output through pr; -r, -N and the --from-file and
	// --to-file options walk directories, and diff follows the symlinks in
	// a directory it compares, so directory operands ask too.
	"diff": {long: []string{"paginate", "recursive", "new-file", "unidirectional-new-file", "from-file", "to-file"}, short: "lrN",
		check: func(args []string, cwd string) string {
			for _, a := range args {
				if strings.HasPrefix(a, "-") {
					continue
				}
				if fi, err := os.Stat(resolvePath(cwd, a)); err == nil && fi.IsDir() {
					return "diff follows the symlinks inside a directory it compares"
				}
			}
			return ""
		}},
	// -s and an MMDDhhmm operand set the system clock; only options and
	// a +FORMAT run unasked.
	"date": {long: []string{"set"}, short: "s", check: func(args []string, _ string) string {
		for _, a := range args {
			if !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
				return "date with an operand other than +FORMAT can set the clock"
			}
		}
		return ""
	}},
	// -c reads the names of the files to check from a file.
	"md5sum": {long: []string{"check"}, short: "c"}, "sha1sum": {long: []string{"check"}, short: "c"},
	"sha256sum": {long: []string{"check"}, short: "c"}, "sha512sum": {long: []string{"check"}, short: "c"},
	"b2sum": {long: []string{"check"}, short: "c"},
}

// UnaskedPrograms returns the names of the programs allowBins may list
// under ask: unlisted, sorted.
func UnaskedPrograms() []string {
	names := make([]string, 0, len(unaskedPrograms))
	for n := range unaskedPrograms {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// whyAsks says why programs people often list cannot run unasked, for the
// configuration error; a program not named here gets the general reason.
var whyAsks = func() map[string]string {
	why := map[string]string{
		"tar":     "it can run other programs (--checkpoint-action=exec, --to-command, --use-compress-program, --info-script)",
		"sed":     "it runs commands (the e command, s///e) and writes files (w)",
		"find":    "it runs programs (-exec, -execdir, -ok) and writes files (-fprint)",
		"git":     "it runs hooks, aliases, pagers and ssh (-c core.sshCommand=…)",
		"make":    "it runs the recipes of a Makefile",
		"jq":      "its programs read JSON and jq files anywhere (import, include, ~/.jq)",
		"xargs":   "it runs the command given in its arguments",
		"rsync":   "it runs programs (-e, --rsync-path) and reaches the network",
		"ssh":     "it reaches the network and runs programs (ProxyCommand, LocalCommand)",
		"scp":     "it reaches the network and runs programs (-S, ProxyCommand)",
		"busybox": "it is every program at once, shells included",
	}
	for reason, names := range map[string][]string{
		"it is a shell: it runs any command": {"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "pwsh"},
		"it runs the code or scripts it is given": {"python", "python3", "perl", "ruby", "node", "deno", "bun", "php", "lua",
			"tclsh", "awk", "gawk", "mawk", "nawk", "osascript", "Rscript", "go", "npm", "npx", "pnpm", "yarn", "cargo", "pip", "pip3"},
		"it runs the command given in its arguments": {"env", "sudo", "doas", "su", "runuser", "setpriv", "nohup", "timeout", "nice",
			"ionice", "chrt", "taskset", "stdbuf", "time", "flock", "setsid", "unshare", "nsenter", "chroot", "watch", "script",
			"strace", "ltrace", "gdb", "parallel"},
		"it reaches the network, past the egress rules": {"curl", "wget", "nc", "ncat", "netcat", "socat", "telnet", "ftp", "sftp",
			"ping", "dig", "nslookup", "host"},
		"pagers and editors run shell commands (!command)": {"less", "more", "most", "man", "vi", "vim", "nvim", "view", "nano",
			"emacs", "ed", "ex"},
		"it changes files": {"cp", "mv", "rm", "ln", "dd", "tee", "install", "truncate", "touch", "mkdir", "chmod", "chown", "rmdir"},
	} {
		for _, n := range names {
			why[n] = reason
		}
	}
	return why
}()

// notUnasked is the configuration error for allowBins entry b under ask:
// unlisted, or "" when b may run unasked.
func notUnasked(b string) string {
	name := filepath.Base(b)
	if _, ok := unaskedPrograms[name]; ok {
		return ""
	}
	why := whyAsks[name]
	if why == "" {
		why = "it is not one of the programs known not to run other programs, reach the network or write files (" +
			strings.Join(UnaskedPrograms(), ", ") + ")"
	}
	return fmt.Sprintf("%s cannot run without approval: %s; remove it from allowBins and it runs once an operator approves (ask: unlisted asks for every program not listed)", name, why)
}

// checkUnaskedFile checks the file allowBins entry b resolved to (its real
// path), so that what runs unasked is the program the name promises.
func checkUnaskedFile(b, real, workspace string) error {
	name := filepath.Base(b)
	if filepath.Base(real) != name {
		return fmt.Errorf("%s resolves to %s, another program; only a file named %s runs without approval", b, real, name)
	}
	if within(workspace, real) {
		return fmt.Errorf("%s is %s, inside the workspace, where the agent can rewrite it", b, real)
	}
	f, err := os.Open(real)
	if err != nil {
		return fmt.Errorf("%s: %w", b, err)
	}
	defer f.Close()
	var magic [2]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", b, err)
	}
	if string(magic[:]) == "#!" {
		return fmt.Errorf("%s (%s) is a script, which runs its interpreter; only a compiled program runs without approval", b, real)
	}
	return nil
}

// runsUnasked reports whether plan may run without approval under ask:
// unlisted, and if not, why. The program must be listed in allowBins (by
// its real path), be named as it is in the list both where the model
// named it and where it resolved, set no variables, name no path outside
// the workspace (whatever workspaceOnly says: no operator reads these
// commands) and use none of the program's refused options.
func (t *Tools) runsUnasked(plan *Plan, req Request) (bool, string) {
	switch {
	case t.cfg.Ask != AskUnlisted:
		return false, "tools.exec.ask is always"
	case plan.Shell:
		return false, "shell command lines always ask"
	case !slices.Contains(t.allow, plan.Path):
		return false, plan.Path + " is not in tools.exec.allowBins"
	case len(req.Env) > 0:
		return false, "the call sets environment variables"
	}
	name := filepath.Base(plan.Path)
	prog, ok := unaskedPrograms[name]
	if !ok || filepath.Base(plan.Argv[0]) != name {
		return false, fmt.Sprintf("%s was called as %s", plan.Path, plan.Argv[0])
	}
	args := plan.Argv[1:]
	if err := t.planner.checkOperands(args, plan.Cwd); err != nil {
		return false, err.Error()
	}
	for _, a := range args {
		if opt := refusedOption(a, prog); opt != "" {
			return false, fmt.Sprintf("%s runs unasked only without %s", name, opt)
		}
	}
	if prog.check != nil {
		if why := prog.check(args, plan.Cwd); why != "" {
			return false, why
		}
	}
	return true, ""
}

// refusedOption returns the option of a that prog refuses, or "".
func refusedOption(a string, prog unaskedProgram) string {
	switch {
	case a == "-" || a == "--" || !strings.HasPrefix(a, "-"):
		return ""
	case strings.HasPrefix(a, "--"):
		name, _, _ := strings.Cut(a[2:], "=")
		for _, l := range prog.long {
			if strings.HasPrefix(l, name) {
				return "--" + l
			}
		}
	default:
		if i := strings.IndexAny(a[1:], prog.short); i >= 0 {
			return "-" + a[1+i:2+i]
		}
	}
	return ""
}

// operands counts the arguments that are not options.
func operands(args []string) int {
	n := 0
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			n++
		}
	}
	return n
}
