package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/channels"
	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/gateway/client"
)

// Timeouts of the link commands: reaching the daemon, waiting for the
// first code, and one web.login.wait round (the link itself ends when the
// platform stops issuing codes).
const (
	linkDialTimeout  = 15 * time.Second
	linkStartTimeout = 45 * time.Second
	linkWaitMs       = 60_000
)

// linkCommands are `switchboard <channel> link|logout|status` for every
// bridge whose account is linked from a phone (Descriptor.Linkable).
func linkCommands(reg bridges.Registry) []*command {
	var out []*command
	for _, d := range reg {
		if d.Linkable {
			out = append(out, linkCommand(d), unlinkCommand(d), linkStatusCommand(d))
		}
	}
	return out
}

func linkCommand(d bridges.Descriptor) *command {
	var phone string
	var force bool
	name, label := d.Channel, d.DisplayName()
	return &command{
		name:    name + " link",
		summary: "link a " + label + " account as a device of this bot (QR or pairing code)",
		help: fmt.Sprintf(`Links the %[1]s account the bot answers as: scan the QR code it prints with
%[1]s on the phone; a fresh code is printed each time the shown one expires.
With --phone it prints a pairing code to type on that phone instead. It prints
"Linked as +…" once the phone confirms.

When the daemon runs with channels.%[2]s enabled, linking goes through it and
its bridge connects at once; otherwise the bridge's own store under
<stateDir>/%[2]s/ is linked directly and the bridge connects when the daemon
starts. An account already linked is left alone unless --force, which logs it
out first.`, label, name),
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&phone, "phone", "", "link by pairing code for this phone number, in international form (+15551234567)")
			fs.BoolVar(&force, "force", false, "log out the account already linked, then link anew")
		},
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard %s link: takes no arguments (the phone number goes in --phone)\n", name)
				return exitUsage
			}
			if phone != "" && d.ParseChat != nil {
				if _, _, err := d.ParseChat(phone); err != nil {
					fmt.Fprintf(c.stderr, "switchboard %s link: --phone %q is not a phone number in international form, e.g. +15551234567\n", name, phone)
					return exitUsage
				}
			}
			return c.linking(ctx, g, d, "link", func(ctx context.Context, l *linkOps) error {
				return c.link(ctx, l, phone, force)
			})
		},
	}
}

func unlinkCommand(d bridges.Descriptor) *command {
	name, label := d.Channel, d.DisplayName()
	return &command{
		name:    name + " logout",
		summary: "unlink the " + label + " account and delete its credentials",
		help: fmt.Sprintf(`Logs the linked %[1]s device out: %[1]s removes it from the phone's linked
devices, and its keys are deleted from <stateDir>/%[2]s/. This is the only
command that deletes them; restarts and updates never do. When %[1]s cannot be
reached the local keys are deleted anyway, and the message says to remove the
device on the phone too. It goes through the running daemon when it runs the
bridge, else to the store directly.`, label, name),
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard %s logout: takes no arguments\n", name)
				return exitUsage
			}
			return c.linking(ctx, g, d, "logout", func(ctx context.Context, l *linkOps) error {
				if err := l.logout(ctx); err != nil {
					return err
				}
				fmt.Fprintln(c.stdout, "Logged out: the device is unlinked and its credentials are deleted.")
				return nil
			})
		},
	}
}

func linkStatusCommand(d bridges.Descriptor) *command {
	name, label := d.Channel, d.DisplayName()
	return &command{
		name:    name + " status",
		summary: "show the linked " + label + " account and the bridge's state",
		help: fmt.Sprintf(`Prints the %[1]s account linked in <stateDir>/%[2]s/ (or that none is), and,
when the daemon runs, its %[1]s bridge's connection state as channels.status
reports it.`, label, name),
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard %s status: takes no arguments\n", name)
				return exitUsage
			}
			return c.linking(ctx, g, d, "status", func(ctx context.Context, l *linkOps) error {
				return c.linkStatus(ctx, l)
			})
		},
	}
}

// linkOps is how a link command reaches the account: through the running
// daemon's gateway when it runs the bridge (daemon set), else through a
// bridge built here on the bridge's own store.
type linkOps struct {
	desc     bridges.Descriptor
	section  bridges.Section
	stateDir string
	env      bridges.Env
	// daemon is the running daemon's gateway, nil when none runs.
	daemon *client.Client
}

// viaDaemon reports whether the daemon runs the bridge (as the
// configuration says), so the account is its to act on.
func (l *linkOps) viaDaemon() bool { return l.daemon != nil && l.section.IsEnabled() }

// bridgeDir is where the bridge keeps its files.
func (l *linkOps) bridgeDir() string { return filepath.Join(l.stateDir, l.desc.Channel) }

// hasStore reports whether the bridge has kept anything yet: without its
// folder nothing is linked, and looking must not create it.
func (l *linkOps) hasStore() bool {
	_, err := os.Stat(l.bridgeDir())
	return !errors.Is(err, fs.ErrNotExist)
}

// offline builds the bridge on its own store, without starting it; the
// caller closes it.
func (l *linkOps) offline() (bridges.LoginFlow, bridges.Bridge, error) {
	b, err := l.desc.New(l.section, l.env)
	if err != nil {
		return nil, nil, err
	}
	flow, ok := b.(bridges.LoginFlow)
	if !ok {
		closeBridge(b)
		return nil, nil, fmt.Errorf("the %s bridge is not linked from a phone", l.desc.Channel)
	}
	return flow, b, nil
}

// closeBridge releases what a bridge built here holds.
func closeBridge(b bridges.Bridge) {
	if c, ok := b.(io.Closer); ok {
		_ = c.Close()
	}
}

// linking loads the configuration, dials the daemon if it runs, and runs
// fn; it turns fn's error into exit 1.
func (c *cli) linking(ctx context.Context, g *globalFlags, d bridges.Descriptor, verb string, fn func(context.Context, *linkOps) error) int {
	cfg, _, stateDir, code := c.loadConfigAndState(g.config, config.ForManagement)
	if cfg == nil {
		return code
	}
	section, ok := cfg.Channels.Section(d.Channel)
	if !ok {
		fmt.Fprintf(c.stderr, "switchboard %s %s: the configuration has no channels.%s section\n", d.Channel, verb, d.Channel)
		return exitFailure
	}
	// Ctrl-C ends linking cleanly (the half-made link is dropped).
	ctx, stop := c.cancelOnSignal(ctx)
	defer stop()
	l := &linkOps{desc: d, section: section, stateDir: stateDir, env: bridges.Env{
		AgentID: core.DefaultAgentID, Session: cfg.Session, StateDir: stateDir, Log: c.logger(g).With("channel", d.Channel),
	}}
	dctx, dcancel := context.WithTimeout(ctx, linkDialTimeout)
	var err error
	l.daemon, err = dialDaemon(dctx, cfg, stateDir)
	dcancel()
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard %s %s: %v\n", d.Channel, verb, err)
		return exitFailure
	}
	if l.daemon != nil {
		defer l.daemon.Close()
	}
	if err := fn(ctx, l); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			fmt.Fprintf(c.stderr, "switchboard %s %s: interrupted\n", d.Channel, verb)
		} else {
			fmt.Fprintf(c.stderr, "switchboard %s %s: %v\n", d.Channel, verb, err)
		}
		return exitFailure
	}
	return exitOK
}

// linker is one linking under way: through the daemon or on the store.
type linker interface {
	// start begins linking and returns the first code, or only a message
	// when an account is linked already (and force is off).
	start(ctx context.Context, phone string, force bool) (channels.Login, error)
	// next waits for the link (Linked), a fresh QR code, or neither
	// (waiting goes on).
	next(ctx context.Context) (channels.Login, error)
	close()
}

// link links an account, printing each code, until the phone confirms,
// linking ends, or ctx does.
func (c *cli) link(ctx context.Context, l *linkOps, phone string, force bool) error {
	var lk linker = &daemonLinker{c: l.daemon, channel: l.desc.Channel}
	if !l.viaDaemon() {
		flow, b, err := l.offline()
		if err != nil {
			return err
		}
		defer closeBridge(b)
		lk = &storeLinker{flow: flow, bridge: b, label: l.desc.DisplayName()}
	}
	defer lk.close()
	res, err := lk.start(ctx, phone, force)
	if err != nil {
		return err
	}
	if res.QR == "" && res.PairingCode == "" {
		return fmt.Errorf("%s To link another account, run `switchboard %s link --force` (or `switchboard %s logout` first)", res.Message, l.desc.Channel, l.desc.Channel)
	}
	if res.PairingCode != "" {
		fmt.Fprintf(c.stdout, "Pairing code: %s\n%s\n", res.PairingCode, res.Message)
	} else {
		fmt.Fprintln(c.stdout, res.Message)
		channels.RenderQR(c.stdout, res.QR)
	}
	for {
		res, err := lk.next(ctx)
		if err != nil {
			return err
		}
		switch {
		case res.Linked:
			fmt.Fprintf(c.stdout, "Linked as %s.\n", res.Account)
			if !l.viaDaemon() {
				fmt.Fprintf(c.stdout, "The bridge connects when the daemon runs with channels.%s.enabled: true (switchboard run).\n", l.desc.Channel)
			}
			return nil
		case res.QR != "":
			fmt.Fprintln(c.stdout, "The QR code expired; scan this new one.")
			channels.RenderQR(c.stdout, res.QR)
		}
	}
}

// daemonLinker links through the daemon's web.login.start and
// web.login.wait.
type daemonLinker struct {
	c       *client.Client
	channel string
}

func (d *daemonLinker) start(ctx context.Context, phone string, force bool) (channels.Login, error) {
	ctx, cancel := context.WithTimeout(ctx, linkStartTimeout)
	defer cancel()
	raw, err := d.c.Call(ctx, "web.login.start", map[string]any{
		"channel": d.channel, "phone": phone, "force": force, "timeoutMs": (linkStartTimeout - 5*time.Second).Milliseconds(),
	})
	if err != nil {
		return channels.Login{}, err
	}
	return decodeLogin(raw)
}

func (d *daemonLinker) next(ctx context.Context) (channels.Login, error) {
	ctx, cancel := context.WithTimeout(ctx, linkWaitMs*time.Millisecond+15*time.Second)
	defer cancel()
	raw, err := d.c.Call(ctx, "web.login.wait", map[string]any{"channel": d.channel, "timeoutMs": linkWaitMs})
	if err != nil {
		return channels.Login{}, err
	}
	return decodeLogin(raw)
}

func (d *daemonLinker) close() {}

// decodeLogin reads a web.login.* payload.
func decodeLogin(raw json.RawMessage) (channels.Login, error) {
	var p struct {
		Message, QR, PairingCode, Account string
		Connected                         bool
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return channels.Login{}, fmt.Errorf("the daemon's answer could not be read (%v); are the CLI and the daemon the same version?", err)
	}
	return channels.Login{Message: p.Message, QR: p.QR, PairingCode: p.PairingCode, Account: p.Account, Linked: p.Connected}, nil
}

// storeLinker links the bridge's store directly (no daemon runs the
// bridge).
type storeLinker struct {
	flow   bridges.LoginFlow
	bridge bridges.Bridge
	label  string
}

func (s *storeLinker) start(ctx context.Context, phone string, force bool) (channels.Login, error) {
	account, linked, err := s.flow.LinkedAccount(ctx)
	if err != nil {
		return channels.Login{}, err
	}
	if linked && !force {
		return channels.Login{Message: fmt.Sprintf("%s is already linked as %s.", s.label, account)}, nil
	}
	if linked {
		lo, ok := s.bridge.(bridges.Logouter)
		if !ok {
			return channels.Login{}, fmt.Errorf("the %s bridge cannot log out, so it cannot relink", s.label)
		}
		if err := lo.Logout(ctx); err != nil {
			if _, still, lerr := s.flow.LinkedAccount(ctx); lerr != nil || still {
				return channels.Login{}, fmt.Errorf("logging %s out before relinking failed: %w", account, err)
			}
			// The keys are gone all the same; err says the platform was
			// not told and what to do about it.
		}
	}
	sctx, cancel := context.WithTimeout(ctx, linkStartTimeout)
	defer cancel()
	ch, err := s.flow.LoginStart(sctx, phone)
	if err != nil {
		return channels.Login{}, err
	}
	return channels.Login{QR: ch.QR, PairingCode: ch.PairingCode, Message: ch.Instructions}, nil
}

func (s *storeLinker) next(ctx context.Context) (channels.Login, error) {
	ch, err := s.flow.LoginWait(ctx)
	switch {
	case errors.Is(err, bridges.ErrLoginRefresh):
		return channels.Login{QR: ch.QR}, nil
	case err != nil:
		return channels.Login{}, err
	case !ch.Linked:
		return channels.Login{}, errors.New("linking ended without a linked account; run link again")
	}
	return channels.Login{Linked: true, Account: ch.Account}, nil
}

func (s *storeLinker) close() {}

// logout unlinks the account: through the daemon's bridge, or on the
// store.
func (l *linkOps) logout(ctx context.Context) error {
	if l.viaDaemon() {
		_, err := l.daemon.Call(ctx, "channels.logout", map[string]string{"channel": l.desc.Channel})
		return err
	}
	nothing := fmt.Errorf("no %s account is linked; nothing to log out", l.desc.DisplayName())
	if !l.hasStore() {
		return nothing
	}
	flow, b, err := l.offline()
	if err != nil {
		return err
	}
	defer closeBridge(b)
	if _, linked, err := flow.LinkedAccount(ctx); err != nil {
		return err
	} else if !linked {
		return nothing
	}
	lo, ok := b.(bridges.Logouter)
	if !ok {
		return fmt.Errorf("the %s bridge has no logout", l.desc.Channel)
	}
	return lo.Logout(ctx)
}

// linkStatus prints the linked account and the bridge's state.
func (c *cli) linkStatus(ctx context.Context, l *linkOps) error {
	label := l.desc.DisplayName()
	account, linked := "", false
	if l.hasStore() {
		flow, b, err := l.offline()
		if err != nil {
			return err
		}
		account, linked, err = flow.LinkedAccount(ctx)
		closeBridge(b)
		if err != nil {
			return err
		}
	}
	if linked {
		fmt.Fprintf(c.stdout, "%s: linked as %s\n", label, account)
	} else {
		fmt.Fprintf(c.stdout, "%s: not linked; run `switchboard %s link`\n", label, l.desc.Channel)
	}
	fmt.Fprintf(c.stdout, "Store: %s\n", l.bridgeDir())
	if l.daemon == nil {
		fmt.Fprintln(c.stdout, "Bridge: the daemon is not running (start it with `switchboard run`)")
		return nil
	}
	raw, err := l.daemon.Call(ctx, "channels.status", nil)
	if err != nil {
		return err
	}
	var status struct {
		ChannelAccounts map[string][]gateway.ChannelStatus `json:"channelAccounts"`
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		return fmt.Errorf("the daemon's channels.status could not be read: %w", err)
	}
	accounts := status.ChannelAccounts[l.desc.Channel]
	if len(accounts) == 0 {
		fmt.Fprintf(c.stdout, "Bridge: not running in the daemon; set channels.%s.enabled: true and restart it\n", l.desc.Channel)
		return nil
	}
	for _, a := range accounts {
		line := "Bridge: " + a.State
		if len(accounts) > 1 {
			line = fmt.Sprintf("Bridge (%s): %s", a.AccountID, a.State)
		}
		if a.LastError != "" {
			line += " (" + a.LastError + ")"
		}
		fmt.Fprintln(c.stdout, line)
	}
	return nil
}
