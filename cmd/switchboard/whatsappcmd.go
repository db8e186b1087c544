package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/gateway/client"
)

// Timeouts of the whatsapp commands: reaching the daemon, waiting for the
// first code, and one web.login.wait round (the link itself ends when
// WhatsApp stops issuing codes, about 160 s after the first).
const (
	whatsappDialTimeout  = 15 * time.Second
	whatsappStartTimeout = 45 * time.Second
	whatsappWaitMs       = 60_000
)

func whatsappLinkCommand() *command {
	var phone string
	var force bool
	return &command{
		name:    "whatsapp link",
		summary: "link a WhatsApp account as a device of this bot (QR or pairing code)",
		help: `Links the WhatsApp account the bot answers as, the way WhatsApp Web is linked:
scan the QR code it prints with WhatsApp on the phone (Settings → Linked
devices → Link a device); a fresh code is printed each time the shown one
expires. With --phone it prints a pairing code to type on that phone instead
(Link with phone number instead). It prints "Linked as +…" once the phone
confirms.

When the daemon runs with channels.whatsapp enabled, linking goes through it
and its bridge connects at once; otherwise the device store
(<stateDir>/whatsapp/device.db) is linked directly and the bridge connects
when the daemon starts. An account already linked is left alone unless
--force, which logs it out first.`,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&phone, "phone", "", "link by pairing code for this phone number, in international form (+15551234567)")
			fs.BoolVar(&force, "force", false, "log out the account already linked, then link anew")
		},
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard whatsapp link: takes no arguments (the phone number goes in --phone)\n")
				return exitUsage
			}
			if phone != "" {
				if _, err := whatsapp.ParseTarget(phone); err != nil {
					fmt.Fprintf(c.stderr, "switchboard whatsapp link: --phone %q is not a phone number in international form, e.g. +15551234567\n", phone)
					return exitUsage
				}
			}
			return c.whatsapp(ctx, g, "link", func(ctx context.Context, w *whatsappOps) error {
				return c.whatsappLink(ctx, w, phone, force)
			})
		},
	}
}

func whatsappLogoutCommand() *command {
	return &command{
		name:    "whatsapp logout",
		summary: "unlink the WhatsApp account and delete its credentials",
		help: `Logs the linked WhatsApp device out: WhatsApp removes it from the phone's
Linked devices, and its keys are deleted from <stateDir>/whatsapp/device.db.
This is the only command that deletes them; restarts and updates never do.
When WhatsApp cannot be reached the local keys are deleted anyway, and the
message says to remove the device on the phone too. It goes through the
running daemon when it runs the WhatsApp bridge, else to the store directly.`,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard whatsapp logout: takes no arguments\n")
				return exitUsage
			}
			return c.whatsapp(ctx, g, "logout", func(ctx context.Context, w *whatsappOps) error {
				if err := w.logout(ctx); err != nil {
					return err
				}
				fmt.Fprintln(c.stdout, "Logged out: the device is unlinked and its credentials are deleted.")
				return nil
			})
		},
	}
}

func whatsappStatusCommand() *command {
	return &command{
		name:    "whatsapp status",
		summary: "show the linked WhatsApp account and the bridge's state",
		help: `Prints the WhatsApp account linked in <stateDir>/whatsapp/device.db (or that
none is), and, when the daemon runs, its WhatsApp bridge's connection state
as channels.status reports it.`,
		run: func(ctx context.Context, c *cli, g *globalFlags, args []string) int {
			if len(args) > 0 {
				fmt.Fprintf(c.stderr, "switchboard whatsapp status: takes no arguments\n")
				return exitUsage
			}
			return c.whatsapp(ctx, g, "status", func(ctx context.Context, w *whatsappOps) error {
				return c.whatsappStatus(ctx, w)
			})
		},
	}
}

// whatsappOps is how a whatsapp command reaches the account: through the
// running daemon's gateway when it runs the bridge (daemon set), else the
// device store directly.
type whatsappOps struct {
	cfg       *config.Config
	storePath string
	newClient whatsapp.NewClientFunc
	log       *slog.Logger
	// daemon is the running daemon's gateway, nil when none runs.
	daemon *client.Client
}

// viaDaemon reports whether the daemon runs the WhatsApp bridge (as the
// configuration says), so the account is its to act on.
func (w *whatsappOps) viaDaemon() bool {
	return w.daemon != nil && w.cfg.Channels.WhatsApp.Enabled
}

// openStore opens the device store; with mustExist, a missing file is
// reported as ok false rather than created.
func (w *whatsappOps) openStore(ctx context.Context, mustExist bool) (*whatsapp.Store, bool, error) {
	if mustExist {
		if _, err := os.Stat(w.storePath); errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
	}
	st, err := whatsapp.OpenStore(ctx, w.storePath)
	if err != nil {
		return nil, false, err
	}
	return st, true, nil
}

// whatsapp loads the configuration, dials the daemon if it runs, and runs
// fn; it turns fn's error into exit 1.
func (c *cli) whatsapp(ctx context.Context, g *globalFlags, verb string, fn func(context.Context, *whatsappOps) error) int {
	cfg, _, stateDir, code := c.loadConfigAndState(g.config)
	if cfg == nil {
		return code
	}
	// Ctrl-C ends linking cleanly (the half-made link is dropped).
	ctx, stop := c.cancelOnSignal(ctx)
	defer stop()
	w := &whatsappOps{cfg: cfg, storePath: whatsapp.StorePath(stateDir), newClient: c.whatsappClient, log: c.logger(g)}
	dctx, dcancel := context.WithTimeout(ctx, whatsappDialTimeout)
	var err error
	w.daemon, err = dialDaemon(dctx, cfg, stateDir)
	dcancel()
	if err != nil {
		fmt.Fprintf(c.stderr, "switchboard whatsapp %s: %v\n", verb, err)
		return exitFailure
	}
	if w.daemon != nil {
		defer w.daemon.Close()
	}
	if err := fn(ctx, w); err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			fmt.Fprintf(c.stderr, "switchboard whatsapp %s: interrupted\n", verb)
		} else {
			fmt.Fprintf(c.stderr, "switchboard whatsapp %s: %v\n", verb, err)
		}
		return exitFailure
	}
	return exitOK
}

// linker is one linking under way: through the daemon or on the store.
type linker interface {
	// start begins linking and returns the first code, or only a message
	// when an account is linked already (and force is off).
	start(ctx context.Context, phone string, force bool) (gateway.LoginResult, error)
	// next waits for the link (Connected), a fresh QR code, or neither
	// (waiting goes on).
	next(ctx context.Context) (gateway.LoginResult, error)
	close()
}

// whatsappLink links an account, printing each code, until the phone
// confirms, linking ends, or ctx does.
func (c *cli) whatsappLink(ctx context.Context, w *whatsappOps, phone string, force bool) error {
	var lk linker = &daemonLinker{c: w.daemon}
	if !w.viaDaemon() {
		st, _, err := w.openStore(ctx, false)
		if err != nil {
			return err
		}
		defer st.Close()
		lk = &storeLinker{st: st, newClient: w.newClient, log: w.log}
	}
	defer lk.close()
	res, err := lk.start(ctx, phone, force)
	if err != nil {
		return err
	}
	if res.QR == "" && res.PairingCode == "" {
		return fmt.Errorf("%s To link another account, run `switchboard whatsapp link --force` (or `switchboard whatsapp logout` first)", res.Message)
	}
	if res.PairingCode != "" {
		fmt.Fprintf(c.stdout, "Pairing code: %s\n%s\n", res.PairingCode, pairingCodeHelp(res.PairingCode))
	} else {
		fmt.Fprintln(c.stdout, scanHelp)
		whatsapp.RenderQR(c.stdout, res.QR)
	}
	for {
		res, err := lk.next(ctx)
		if err != nil {
			return err
		}
		switch {
		case res.Connected:
			fmt.Fprintf(c.stdout, "Linked as %s.\n", res.Account)
			if !w.viaDaemon() {
				fmt.Fprintln(c.stdout, "The bridge connects when the daemon runs with channels.whatsapp.enabled: true (switchboard run).")
			}
			return nil
		case res.QR != "":
			fmt.Fprintln(c.stdout, "The QR code expired; scan this new one.")
			whatsapp.RenderQR(c.stdout, res.QR)
		}
	}
}

// daemonLinker links through the daemon's web.login.start and
// web.login.wait.
type daemonLinker struct{ c *client.Client }

func (d *daemonLinker) start(ctx context.Context, phone string, force bool) (gateway.LoginResult, error) {
	ctx, cancel := context.WithTimeout(ctx, whatsappStartTimeout)
	defer cancel()
	raw, err := d.c.Call(ctx, "web.login.start", map[string]any{
		"channel": whatsapp.Channel, "phone": phone, "force": force, "timeoutMs": (whatsappStartTimeout - 5*time.Second).Milliseconds(),
	})
	if err != nil {
		return gateway.LoginResult{}, err
	}
	return decodeLoginResult(raw)
}

func (d *daemonLinker) next(ctx context.Context) (gateway.LoginResult, error) {
	ctx, cancel := context.WithTimeout(ctx, whatsappWaitMs*time.Millisecond+15*time.Second)
	defer cancel()
	raw, err := d.c.Call(ctx, "web.login.wait", map[string]any{"channel": whatsapp.Channel, "timeoutMs": whatsappWaitMs})
	if err != nil {
		return gateway.LoginResult{}, err
	}
	return decodeLoginResult(raw)
}

func (d *daemonLinker) close() {}

// decodeLoginResult reads a web.login.* payload.
func decodeLoginResult(raw json.RawMessage) (gateway.LoginResult, error) {
	var p struct {
		Message, QR, PairingCode, Account string
		Connected                         bool
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return gateway.LoginResult{}, fmt.Errorf("the daemon's answer could not be read (%v); are the CLI and the daemon the same version?", err)
	}
	return gateway.LoginResult{Message: p.Message, QR: p.QR, PairingCode: p.PairingCode, Account: p.Account, Connected: p.Connected}, nil
}

// storeLinker links the device store directly (no daemon runs the
// bridge).
type storeLinker struct {
	st        *whatsapp.Store
	newClient whatsapp.NewClientFunc
	log       *slog.Logger
	link      *whatsapp.Link
}

func (s *storeLinker) start(ctx context.Context, phone string, force bool) (gateway.LoginResult, error) {
	account, linked, err := linkedAccount(ctx, s.st)
	if err != nil {
		return gateway.LoginResult{}, err
	}
	if linked && !force {
		return gateway.LoginResult{Message: fmt.Sprintf("WhatsApp is already linked as %s.", account)}, nil
	}
	if linked {
		if err := whatsapp.LogoutStore(ctx, s.st, s.newClient, s.log); err != nil {
			if _, still, lerr := linkedAccount(ctx, s.st); lerr != nil || still {
				return gateway.LoginResult{}, fmt.Errorf("logging %s out before relinking failed: %w", account, err)
			}
			// The keys are gone all the same; err says WhatsApp was not
			// told and what to do about it.
			s.log.Warn("relinking after a partial logout", "err", err)
		}
	}
	sctx, cancel := context.WithTimeout(ctx, whatsappStartTimeout)
	defer cancel()
	l, ch, err := whatsapp.StartLink(sctx, s.st, s.newClient, s.log, phone)
	if err != nil {
		return gateway.LoginResult{}, err
	}
	s.link = l
	return gateway.LoginResult{QR: ch.QR, PairingCode: ch.PairingCode}, nil
}

func (s *storeLinker) next(ctx context.Context) (gateway.LoginResult, error) {
	ch, err := s.link.Next(ctx)
	switch {
	case errors.Is(err, bridges.ErrLoginRefresh):
		return gateway.LoginResult{QR: ch.QR}, nil
	case err != nil:
		return gateway.LoginResult{}, err
	case !ch.Linked:
		return gateway.LoginResult{}, errors.New("linking ended without a linked account; run `switchboard whatsapp link` again")
	}
	return gateway.LoginResult{Connected: true, Account: ch.Account}, nil
}

func (s *storeLinker) close() {
	if s.link != nil {
		s.link.Close()
	}
}

// logout unlinks the account: through the daemon's bridge, or on the
// store.
func (w *whatsappOps) logout(ctx context.Context) error {
	if w.viaDaemon() {
		_, err := w.daemon.Call(ctx, "channels.logout", map[string]string{"channel": whatsapp.Channel})
		return err
	}
	st, ok, err := w.openStore(ctx, true)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("no WhatsApp account is linked; nothing to log out")
	}
	defer st.Close()
	return whatsapp.LogoutStore(ctx, st, w.newClient, w.log)
}

// whatsappStatus prints the linked account and the bridge's state.
func (c *cli) whatsappStatus(ctx context.Context, w *whatsappOps) error {
	st, ok, err := w.openStore(ctx, true)
	if err != nil {
		return err
	}
	account, linked := "", false
	if ok {
		account, linked, err = linkedAccount(ctx, st)
		st.Close()
		if err != nil {
			return err
		}
	}
	if linked {
		fmt.Fprintf(c.stdout, "WhatsApp: linked as %s\n", account)
	} else {
		fmt.Fprintln(c.stdout, "WhatsApp: not linked; run `switchboard whatsapp link`")
	}
	fmt.Fprintf(c.stdout, "Device store: %s\n", w.storePath)
	if w.daemon == nil {
		fmt.Fprintln(c.stdout, "Bridge: the daemon is not running (start it with `switchboard run`)")
		return nil
	}
	raw, err := w.daemon.Call(ctx, "channels.status", nil)
	if err != nil {
		return err
	}
	var status struct {
		ChannelAccounts map[string][]gateway.ChannelStatus `json:"channelAccounts"`
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		return fmt.Errorf("the daemon's channels.status could not be read: %w", err)
	}
	accounts := status.ChannelAccounts[whatsapp.Channel]
	if len(accounts) == 0 {
		fmt.Fprintln(c.stdout, "Bridge: not running in the daemon; set channels.whatsapp.enabled: true and restart it")
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
