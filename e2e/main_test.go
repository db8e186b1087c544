package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// The shared fixtures: the daemon binary and one headless browser, both
// made once for the package.
var (
	binPath string // the switchboard binary under test

	browserPath string          // Chromium, "" when not installed
	browserCtx  context.Context // the running browser; tabs are children
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "switchboard-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)

	binPath = filepath.Join(dir, "switchboard")
	if err := buildDaemon(binPath); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building switchboard:", err)
		return 1
	}

	browserPath = findBrowser()
	if browserPath != "" {
		cancel, err := startBrowser(filepath.Join(dir, "chromium-profile"))
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e: starting", browserPath+":", err)
			return 1
		}
		defer cancel()
	}
	return m.Run()
}

// buildDaemon builds ./cmd/switchboard, with -race when the tests have it.
func buildDaemon(out string) error {
	args := []string{"build", "-o", out}
	if raceEnabled {
		args = append(args, "-race")
	}
	args = append(args, "github.com/switchboardhq/switchboard/cmd/switchboard")
	cmd := exec.Command(goTool(), args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// goTool is the go command: $GO (as the Makefile passes it), else go on
// PATH.
func goTool() string {
	if g := os.Getenv("GO"); g != "" {
		return g
	}
	return "go"
}

// findBrowser returns the Chromium to drive: $E2E_CHROMIUM, else the first
// of the usual names on PATH.
func findBrowser() string {
	if p := os.Getenv("E2E_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// startBrowser starts headless Chromium with the flags that work in a
// closed sandbox, and a fresh profile.
func startBrowser(profile string) (context.CancelFunc, error) {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browserPath),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(allocCtx)
	// The first action starts the browser and ties its life to the context
	// it runs with, so it must be ctx itself, not a shorter-lived child.
	if err := chromedp.Do(ctx); err != nil {
		cancelBrowser()
		cancelAlloc()
		return nil, err
	}
	browserCtx = ctx
	return func() { cancelBrowser(); cancelAlloc() }, nil
}

// needBrowser skips the test when there is no Chromium, and fails it under
// CI, which must run the browser tests.
func needBrowser(t *testing.T) {
	t.Helper()
	if browserPath != "" {
		return
	}
	if os.Getenv("CI") != "" || os.Getenv("E2E_REQUIRE_BROWSER") != "" {
		t.Fatal("e2e: Chromium not found, and CI (or `make e2e`) must run the browser tests: install the Debian package chromium (scripts/install-chromium does) or set E2E_CHROMIUM")
	}
	t.Skip("e2e: Chromium not found; `make e2e` installs it (Debian package chromium), or set E2E_CHROMIUM")
}
