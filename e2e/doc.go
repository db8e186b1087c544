// Package e2e holds Switchboard's end-to-end tests: a real `switchboard
// run` child process (built with the race detector when the tests are),
// driven through its public surfaces. The web chat tests open the page in
// headless Chromium through github.com/chromedp/chromedp, against a fake
// model speaking Anthropic's streaming API.
//
// The browser tests need Chromium (Debian package chromium; `make e2e`
// installs it when missing). Without it they are skipped, except under
// CI=true or E2E_REQUIRE_BROWSER=1, where a missing browser fails the run. Each scenario saves a
// screenshot under e2e/artifacts (E2E_ARTIFACTS overrides the directory).
//
// The OpenClaw compatibility suite (openclaw_*_test.go) drives OpenClaw's
// own CLI, TUI (in tmux) and Control UI (in headless Chromium) against the
// daemon and checks docs/OPENCLAW.md's method table against OpenClaw's
// method list. It needs
// Node.js 24 and the npm package openclaw at e2e/OPENCLAW_VERSION (or
// $OPENCLAW_VERSION), which scripts/install-openclaw puts in the user cache;
// without them it is skipped, except under CI=true or
// E2E_REQUIRE_OPENCLAW=1.
package e2e
