package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// rig is one measured run: the platform fakes and a ready `switchboard run`
// child configured against them.
type rig struct {
	p       *platforms
	c       *child
	dir     string
	bin     string
	port    int
	token   string
	base    string // http://127.0.0.1:<port>
	ready   time.Duration
	cfgPath string
	env     []string
	log     syncBuffer // every child's output, in order
	cleanup []func()
}

// rigSpec is what a mode adds to the rig's configuration.
type rigSpec struct {
	// modelYAML is the models.providers entries (echoModel or a model's
	// yaml()).
	modelYAML string
	// agentDefaults are more keys under agents.defaults, indented by 4.
	agentDefaults string
	// extra is appended to the configuration (top-level keys).
	extra string
	// workspace files written before the first start, by name.
	workspace map[string]string
	// onReply sees the text of every message the bot sends on any
	// platform.
	onReply func(text string)
}

// startRig builds the binary unless o.bin names one, starts the fakes,
// writes the configuration (the three bridges and spec) and runs the child
// until /readyz answers. close stops everything.
func startRig(ctx context.Context, o options, log io.Writer, spec rigSpec) (*rig, error) {
	dir, err := os.MkdirTemp("", "switchboard-bench-")
	if err != nil {
		return nil, err
	}
	r := &rig{dir: dir, bin: o.bin}
	if o.keep {
		fmt.Fprintf(log, "state and log kept in %s\n", dir)
	} else {
		r.cleanup = append(r.cleanup, func() { os.RemoveAll(dir) })
	}
	fail := func(err error) (*rig, error) {
		r.close(log, o.keep)
		return nil, err
	}
	if r.bin == "" {
		if r.bin, err = buildBinary(ctx, dir, ""); err != nil {
			return fail(err)
		}
	}
	raiseFileLimit()
	r.p = startPlatforms(log, spec.onReply)
	r.cleanup = append(r.cleanup, r.p.close)
	if r.port, err = freePort(); err != nil {
		return fail(err)
	}
	var tok [24]byte
	_, _ = rand.Read(tok[:])
	r.token = hex.EncodeToString(tok[:])
	r.cfgPath = filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(r.cfgPath, []byte(r.p.config(r.port, r.token, spec)), 0o600); err != nil {
		return fail(err)
	}
	r.env = r.p.env(r.stateDir())
	for name, content := range spec.workspace {
		path := filepath.Join(r.stateDir(), "workspace", name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fail(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			return fail(err)
		}
	}
	r.base = fmt.Sprintf("http://127.0.0.1:%d", r.port)
	if err := r.prime(ctx); err != nil {
		return fail(err)
	}
	if r.ready, err = r.start(ctx); err != nil {
		return fail(err)
	}
	return r, nil
}

// prime drops the binary from the page cache and runs it once to ready on
// a scratch state directory, so the measured runs find the binary cached
// the way a run of it leaves it, whatever wrote the file (see
// evictPageCache), on a state directory still fresh.
func (r *rig) prime(ctx context.Context) error {
	if err := evictPageCache(r.bin); err != nil {
		return fmt.Errorf("dropping %s from the page cache: %w", r.bin, err)
	}
	var log syncBuffer
	c, err := startChild(r.bin, r.cfgPath, r.p.env(filepath.Join(r.dir, "prime")), &log)
	if err != nil {
		return err
	}
	if _, err := c.waitReady(ctx, r.base, 30*time.Second); err != nil {
		c.kill()
		return fmt.Errorf("the priming run: %w", err)
	}
	if err := c.stop(30 * time.Second); err != nil {
		return fmt.Errorf("stopping the priming run: %w\n%s", err, log.String())
	}
	return r.p.forgetStoppedChild(ctx, 10*time.Second)
}

// stateDir is the child's state directory.
func (r *rig) stateDir() string { return filepath.Join(r.dir, "state") }

// start runs a child with the rig's configuration and waits until it is
// ready.
func (r *rig) start(ctx context.Context) (time.Duration, error) {
	c, err := startChild(r.bin, r.cfgPath, r.env, &r.log)
	if err != nil {
		return 0, err
	}
	r.c = c
	return c.waitReady(ctx, r.base, 30*time.Second)
}

// crash kills the child with SIGKILL (no shutdown of any kind) and starts
// a new one on the same state, returning the new child's time to ready.
func (r *rig) crash(ctx context.Context) (time.Duration, error) {
	r.c.kill()
	fmt.Fprintf(&r.log, "\n--- switchboard-bench: SIGKILL ---\n\n")
	return r.start(ctx)
}

// close stops the child (keeping its log with keep), then the fakes, then
// removes the directory unless kept.
func (r *rig) close(log io.Writer, keep bool) {
	if r.c != nil {
		if err := r.c.stop(30 * time.Second); err != nil {
			fmt.Fprintf(log, "stopping switchboard: %v\n", err)
		}
	}
	if keep {
		_ = os.WriteFile(filepath.Join(r.dir, "switchboard.log"), r.log.Bytes(), 0o600)
	}
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
}
