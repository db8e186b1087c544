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

	"github.com/switchboardhq/switchboard/bridges/telegram/telegramtest"
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
	cleanup []func()
}

// startRig builds the binary unless o.bin names one, starts the fakes,
// writes the configuration (the three bridges, modelYAML, extra) and runs
// the child until /readyz answers. close stops everything.
func startRig(ctx context.Context, o options, log io.Writer, modelYAML, extra string, tgOpts ...telegramtest.Option) (*rig, error) {
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
	r.p = startPlatforms(log, tgOpts...)
	r.cleanup = append(r.cleanup, r.p.close)
	if r.port, err = freePort(); err != nil {
		return fail(err)
	}
	var tok [24]byte
	_, _ = rand.Read(tok[:])
	r.token = hex.EncodeToString(tok[:])
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(r.p.config(r.port, r.token, modelYAML, extra)), 0o600); err != nil {
		return fail(err)
	}
	if r.c, err = startChild(r.bin, cfgPath, r.p.env(filepath.Join(dir, "state"))); err != nil {
		return fail(err)
	}
	r.base = fmt.Sprintf("http://127.0.0.1:%d", r.port)
	if r.ready, err = r.c.waitReady(ctx, r.base, 30*time.Second); err != nil {
		return fail(err)
	}
	return r, nil
}

// close stops the child (keeping its log with keep), then the fakes, then
// removes the directory unless kept.
func (r *rig) close(log io.Writer, keep bool) {
	if r.c != nil {
		if err := r.c.stop(30 * time.Second); err != nil {
			fmt.Fprintf(log, "stopping switchboard: %v\n", err)
		}
		if keep {
			_ = os.WriteFile(filepath.Join(r.dir, "switchboard.log"), r.c.log.Bytes(), 0o600)
		}
	}
	for i := len(r.cleanup) - 1; i >= 0; i-- {
		r.cleanup[i]()
	}
}
