package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// daemon is one `switchboard run` child process and its files.
type daemon struct {
	t      *testing.T
	dir    string // config and state live here
	config string // the config file
	port   int
	model  *llmtest.Server // the fake model, nil with the echo provider

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	logs *syncBuffer // every run's stdout and stderr
}

// syncBuffer is a bytes.Buffer safe for the child's two pipes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// newDaemon writes a config for a daemon on a free loopback port with a
// generated gateway token. With model set, the agent talks to that fake
// Anthropic server; without, to the built-in echo provider (what `make
// run` uses).
func newDaemon(t *testing.T, model *llmtest.Server) *daemon {
	t.Helper()
	return newDaemonWith(t, model, "")
}

// newDaemonWith is newDaemon with extra top-level YAML appended to the
// configuration.
func newDaemonWith(t *testing.T, model *llmtest.Server, extra string) *daemon {
	t.Helper()
	return newDaemonGateway(t, model, "", extra)
}

// newDaemonGateway is newDaemonWith with gatewayExtra, YAML indented by
// two spaces, added to the gateway section.
func newDaemonGateway(t *testing.T, model *llmtest.Server, gatewayExtra, extra string) *daemon {
	t.Helper()
	d := &daemon{t: t, dir: t.TempDir(), port: freePort(t), model: model, logs: &syncBuffer{}}
	d.config = filepath.Join(d.dir, "config.yaml")
	provider := "echo/echo"
	providers := "    echo:\n      api: echo\n"
	if model != nil {
		provider = "fake/scripted"
		providers = fmt.Sprintf("    fake:\n      api: anthropic-messages\n      baseUrl: %s\n      apiKey: test-key\n      models:\n        - id: scripted\n          contextWindow: 200000\n          maxTokens: 1024\n", model.BaseURL)
	}
	cfg := fmt.Sprintf(`stateDir: %s
gateway:
  bind: loopback
  port: %d
%smodels:
  providers:
%sagents:
  defaults:
    model:
      primary: %s
messages:
  queue:
    debounceMs: 0
`, filepath.Join(d.dir, "state"), d.port, gatewayExtra, providers, provider) + extra
	if err := os.WriteFile(d.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.stop()
		if t.Failed() {
			t.Logf("switchboard output:\n%s", d.logs.String())
		}
	})
	return d
}

// url is the page's address.
func (d *daemon) url() string { return fmt.Sprintf("http://127.0.0.1:%d/", d.port) }

// token runs `switchboard gateway token`, as a user would.
func (d *daemon) token() string {
	d.t.Helper()
	out, err := exec.Command(binPath, "gateway", "token", "--config", d.config).Output()
	if err != nil {
		d.t.Fatalf("switchboard gateway token: %v", err)
	}
	tok := strings.TrimSpace(string(out))
	if tok == "" {
		d.t.Fatal("switchboard gateway token printed nothing")
	}
	return tok
}

// start runs the daemon and waits until /readyz answers 200.
func (d *daemon) start() {
	d.t.Helper()
	cmd := exec.Command(binPath, "run", "--config", d.config)
	cmd.Stdout, cmd.Stderr = d.logs, d.logs
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWITCHBOARD_") { // the config file decides
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("switchboard run: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	d.mu.Lock()
	d.cmd, d.done = cmd, done
	d.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.url()+"readyz", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-done:
			d.t.Fatalf("switchboard run exited before it was ready:\n%s", d.logs.String())
		case <-ctx.Done():
			d.t.Fatalf("switchboard run was not ready within 30 s:\n%s", d.logs.String())
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM and waits for the daemon to exit.
func (d *daemon) stop() {
	d.mu.Lock()
	cmd, done := d.cmd, d.done
	d.cmd = nil
	d.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		d.t.Errorf("switchboard run did not stop within 30 s of SIGTERM")
	}
}
