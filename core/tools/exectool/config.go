package exectool

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// Ask modes of Config.Ask.
const (
	// AskAlways asks an operator before every command.
	AskAlways = "always"
	// AskUnlisted runs the programs in AllowBins without asking, each of
	// them one known not to run other programs, reach the network or write
	// files (UnaskedPrograms); every other command asks.
	AskUnlisted = "unlisted"
)

// DefaultPath is the PATH commands run with when Config.Path is empty.
const DefaultPath = "/usr/local/bin:/usr/bin:/bin"

// Config is tools.exec.
type Config struct {
	// Enabled turns the exec and process tools on. Default false: the
	// agent cannot run programs.
	Enabled bool `json:"enabled"`
	// Ask is when an operator must approve a command (the
	// exec.approval.requested event, answered with exec.approval.resolve
	// from the web page or another gateway client): "always" (default) or
	// "unlisted" (the programs in allowBins run without asking; every other
	// program asks).
	Ask string `json:"ask,omitempty"`
	// AllowBins names programs: absolute paths, or names looked up in
	// path. With ask "always" it is, when set, the only programs exec may
	// run; others are refused without asking. With ask "unlisted" it is
	// the programs that run without asking, and only programs known not to
	// run other programs, reach the network or write files may be listed
	// (ls, cat, head, tail, wc, grep, sort, uniq, cut, tr, paste, comm, nl,
	// tac, fold, od, cmp, diff, stat, file, du, df, date, echo, printf, pwd,
	// true, false, seq, uname, basename, dirname, realpath, readlink,
	// md5sum, sha1sum, sha256sum, sha512sum, b2sum); any other is refused
	// at load. Even a listed program asks when the call sets variables,
	// names a path outside the workspace or uses one of the program's
	// options that run, write or follow symlinks (sort
	// --compress-program, grep -R, ls -L…).
	AllowBins []string `json:"allowBins,omitempty"`
	// Shell, when set (for example "/bin/sh"), lets the model pass a
	// command line as one string, run as [shell, "-c", command]; such
	// commands always ask, and their text is not checked for paths outside
	// the workspace (only the approval stands between them and the host).
	// Empty (default) means argv only, no shell.
	Shell string `json:"shell,omitempty"`
	// Path is the PATH programs are looked up in and run with. Default
	// "/usr/local/bin:/usr/bin:/bin".
	Path string `json:"path,omitempty"`
	// PassEnv names variables of the daemon's environment to pass to
	// commands. Default none: commands see only PATH, HOME (the
	// workspace), LANG and what the call sets.
	PassEnv []string `json:"passEnv,omitempty"`
	// WorkspaceOnly refuses operands that name paths outside the
	// workspace (absolute paths, "..", symlinks leading out). Default
	// true. It guards against mistakes; the approval is the boundary.
	WorkspaceOnly *bool `json:"workspaceOnly,omitempty"`
	// TimeoutSec bounds one command, background time included. Default
	// 120.
	TimeoutSec int `json:"timeoutSec,omitempty" min:"1"`
	// BackgroundMs is how long a call waits for its command before
	// leaving it running in the background (the process tool reads it
	// later). Default 30000.
	BackgroundMs int `json:"backgroundMs,omitempty" min:"0"`
	// CleanupMs is the time between SIGTERM and SIGKILL when a command is
	// stopped (timeout, abort, kill). Default 5000.
	CleanupMs int `json:"cleanupMs,omitempty" min:"0"`
	// MaxOutputBytes caps the output kept per command (stdout and stderr
	// together; the start and the end are kept). Default 100000.
	MaxOutputBytes int `json:"maxOutputBytes,omitempty" min:"1024"`
	// ApprovalTimeoutSec is how long a command waits for approval; no
	// answer by then is a denial. Default 120.
	ApprovalTimeoutSec int `json:"approvalTimeoutSec,omitempty" min:"1"`
}

// DefaultConfig returns tools.exec's defaults (exec off).
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

func (c Config) withDefaults() Config {
	if c.Ask == "" {
		c.Ask = AskAlways
	}
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.WorkspaceOnly == nil {
		t := true
		c.WorkspaceOnly = &t
	}
	if c.TimeoutSec <= 0 {
		c.TimeoutSec = 120
	}
	if c.BackgroundMs == 0 {
		c.BackgroundMs = 30000
	}
	if c.CleanupMs == 0 {
		c.CleanupMs = 5000
	}
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = 100_000
	}
	if c.ApprovalTimeoutSec <= 0 {
		c.ApprovalTimeoutSec = 120
	}
	return c
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Validate checks the keys. Under ask: unlisted it refuses an allowBins
// entry that could run other programs, reach the network or write files,
// naming the entry and why.
func (c Config) Validate() error {
	if c.Ask != "" && c.Ask != AskAlways && c.Ask != AskUnlisted {
		return core.FieldErrorf("ask", fmt.Sprintf("%q is not always or unlisted", c.Ask))
	}
	if c.Shell != "" && !filepath.IsAbs(c.Shell) {
		return core.FieldErrorf("shell", fmt.Sprintf("%q must be an absolute path such as /bin/sh", c.Shell))
	}
	for i, dir := range filepath.SplitList(c.Path) {
		if !filepath.IsAbs(dir) {
			return core.FieldErrorf("path", fmt.Sprintf("entry %d %q is not an absolute directory", i, dir))
		}
	}
	for i, b := range c.AllowBins {
		if b == "" || (strings.ContainsRune(b, '/') && !filepath.IsAbs(b)) {
			return core.FieldErrorf(fmt.Sprintf("allowBins[%d]", i), fmt.Sprintf("%q must be a program name or an absolute path", b))
		}
		// Under ask: always a listed program still asks, so any program
		// may be listed; under unlisted the list is what runs unasked.
		if c.Ask == AskUnlisted {
			if why := notUnasked(b); why != "" {
				return core.FieldErrorf(fmt.Sprintf("allowBins[%d]", i), why)
			}
		}
	}
	for i, n := range c.PassEnv {
		if !envName.MatchString(n) {
			return core.FieldErrorf(fmt.Sprintf("passEnv[%d]", i), fmt.Sprintf("%q is not a variable name", n))
		}
		if forbiddenEnv(n) {
			return core.FieldErrorf(fmt.Sprintf("passEnv[%d]", i), fmt.Sprintf("%s changes how programs load or run and cannot be passed", n))
		}
	}
	return nil
}

// forbiddenEnv names variables a call may not set: they change which code
// a program loads or what a shell runs, behind the approved argv's back.
func forbiddenEnv(name string) bool {
	u := strings.ToUpper(name)
	switch u {
	case "PATH", "HOME", "IFS", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "ZDOTDIR",
		"RUBYOPT", "RUBYLIB", "PHPRC", "PHP_INI_SCAN_DIR", "GCONV_PATH", "XDG_CONFIG_HOME", "XDG_CONFIG_DIRS",
		"EDITOR", "VISUAL", "PAGER", "BROWSER", "SSH_ASKPASS", "SUDO_ASKPASS", "TERMINFO", "LOCPATH", "NLSPATH",
		"GOFLAGS", "GOENV", "GOTOOLCHAIN", "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "RUSTC_WRAPPER", "RUSTFLAGS":
		return true
	}
	for _, prefix := range []string{"LD_", "DYLD_", "BASH_FUNC_", "PYTHON", "PERL", "NODE_", "NPM_CONFIG_", "GIT_", "LUA_",
		"JAVA_", "_JAVA_", "JDK_JAVA_", "MAVEN_", "GRADLE_", "CARGO_", "CGO_", "MALLOC_"} {
		if strings.HasPrefix(u, prefix) {
			return true
		}
	}
	return false
}
