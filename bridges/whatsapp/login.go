package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/bridges"
)

// ErrAlreadyLinked is returned when linking a store that holds a linked
// device: log out first.
var ErrAlreadyLinked = fmt.Errorf("whatsapp: %w; unlink it first with `switchboard whatsapp logout` (or channels.logout)", bridges.ErrAlreadyLinked)

// scanHelp and pairingCodeHelp say where on the phone a challenge goes.
const scanHelp = "Scan this QR code with WhatsApp on your phone: Settings → Linked devices → Link a device."

func pairingCodeHelp(code string) string {
	return "On your phone open WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead, and enter " + code + "."
}

// linkConnectTimeout bounds the wait, after the phone confirmed, for the
// new device's first login.
const linkConnectTimeout = 30 * time.Second

// Link pairs a new device with a store: by QR code (refreshed about every
// 20 s until WhatsApp stops issuing them, about 160 s in all) or by a
// pairing code typed on the phone. The device is saved when the phone
// confirms; until then nothing is written.
type Link struct {
	cli       Client
	dev       *store.Device
	items     <-chan whatsmeow.QRChannelItem
	cancel    context.CancelFunc
	handler   uint32
	phone     bool
	connected chan struct{}
	once      sync.Once
}

// StartLink connects an unlinked device and returns the first challenge:
// a QR payload, or with phone set (international form, "+15551234567") a
// pairing code to type under Linked devices → Link with phone number.
func StartLink(ctx context.Context, st *Store, newClient NewClientFunc, log *slog.Logger, phone string) (*Link, bridges.LoginChallenge, error) {
	if newClient == nil {
		newClient = NewWhatsmeowClient
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if phone != "" {
		if _, err := ParseTarget(phone); err != nil {
			return nil, bridges.LoginChallenge{}, fmt.Errorf("whatsapp: --phone: %w", err)
		}
	}
	dev, err := st.Device(ctx)
	if err != nil {
		return nil, bridges.LoginChallenge{}, err
	}
	if dev.ID != nil {
		return nil, bridges.LoginChallenge{}, ErrAlreadyLinked
	}
	// The link outlives the request that starts it (the gateway's
	// web.login.start): it ends with Close or when the codes run out.
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &Link{cli: newClient(dev, log), dev: dev, cancel: cancel, phone: phone != "", connected: make(chan struct{})}
	l.handler = l.cli.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		if _, ok := evt.(*events.Connected); ok {
			l.once.Do(func() { close(l.connected) })
		}
		return true
	})
	fail := func(err error) (*Link, bridges.LoginChallenge, error) {
		l.Close()
		return nil, bridges.LoginChallenge{}, err
	}
	if l.items, err = l.cli.GetQRChannel(lctx); err != nil {
		return fail(fmt.Errorf("whatsapp: start linking: %w", err))
	}
	if err := l.cli.ConnectContext(lctx); err != nil {
		return fail(fmt.Errorf("whatsapp: connect to WhatsApp to link: %w", err))
	}
	var first whatsmeow.QRChannelItem
	select {
	case <-ctx.Done():
		return fail(ctx.Err())
	case item, ok := <-l.items:
		if !ok {
			return fail(errors.New("whatsapp: linking ended before WhatsApp sent a code"))
		}
		first = item
	}
	if first.Event != whatsmeow.QRChannelEventCode {
		return fail(itemError(first))
	}
	if phone == "" {
		return l, bridges.LoginChallenge{QR: first.Code, Instructions: scanHelp}, nil
	}
	code, err := l.cli.PairPhone(ctx, phone, true, whatsmeow.PairClientChrome, "Chrome (Linux)")
	if err != nil {
		return fail(fmt.Errorf("whatsapp: ask for a pairing code for %s: %w", phone, err))
	}
	return l, bridges.LoginChallenge{PairingCode: code, Instructions: pairingCodeHelp(code)}, nil
}

// Next waits for what happens next: a fresh QR code (returned with
// bridges.ErrLoginRefresh), the phone confirming (Linked, once the new
// device has logged in), or the end of linking (an error saying why).
func (l *Link) Next(ctx context.Context) (bridges.LoginChallenge, error) {
	for {
		var item whatsmeow.QRChannelItem
		select {
		case <-ctx.Done():
			return bridges.LoginChallenge{}, ctx.Err()
		case it, ok := <-l.items:
			if !ok {
				return bridges.LoginChallenge{}, errors.New("whatsapp: linking ended; start again")
			}
			item = it
		}
		switch item.Event {
		case whatsmeow.QRChannelEventCode:
			if l.phone {
				continue // the pairing code stays valid
			}
			return bridges.LoginChallenge{QR: item.Code, Instructions: scanHelp}, bridges.ErrLoginRefresh
		case whatsmeow.QRChannelSuccess.Event:
			wait := time.NewTimer(linkConnectTimeout)
			defer wait.Stop()
			select {
			case <-l.connected:
			case <-wait.C:
				// Linked all the same: the device is saved, and the bridge
				// logs in when it starts.
			case <-ctx.Done():
			}
			return bridges.LoginChallenge{Linked: true, Account: ownLabel(l.dev)}, nil
		default:
			return bridges.LoginChallenge{}, itemError(item)
		}
	}
}

// Close ends linking and disconnects. A device linked by then stays
// saved.
func (l *Link) Close() {
	l.cancel()
	l.cli.RemoveEventHandler(l.handler)
	l.cli.Disconnect()
}

// itemError explains a final QR channel item.
func itemError(item whatsmeow.QRChannelItem) error {
	switch item.Event {
	case whatsmeow.QRChannelTimeout.Event:
		return errors.New("whatsapp: no code was scanned in time; start linking again")
	case whatsmeow.QRChannelEventError:
		return fmt.Errorf("whatsapp: the phone could not link this device: %v", item.Error)
	case whatsmeow.QRChannelClientOutdated.Event:
		return errors.New("whatsapp: WhatsApp refused this client version as outdated; update Switchboard")
	case whatsmeow.QRChannelScannedWithoutMultidevice.Event:
		return errors.New("whatsapp: the code was scanned by a phone without multi-device; update WhatsApp on the phone and scan again")
	}
	return fmt.Errorf("whatsapp: linking stopped unexpectedly (%s); start again", item.Event)
}

// LoginStart implements bridges.LoginFlow (the gateway's
// web.login.start): it begins linking while the bridge runs; a linking
// already under way is replaced.
func (b *Bridge) LoginStart(ctx context.Context, phone string) (bridges.LoginChallenge, error) {
	b.mu.Lock()
	old := b.login
	b.login = nil
	b.mu.Unlock()
	if old != nil {
		old.Close()
	}
	l, ch, err := StartLink(ctx, b.opts.Store, b.opts.NewClient, b.opts.Log, phone)
	if err != nil {
		return ch, err
	}
	b.mu.Lock()
	b.login = l
	b.mu.Unlock()
	return ch, nil
}

// LinkedAccount implements bridges.LoginFlow: the phone number of the
// device linked in the store.
func (b *Bridge) LinkedAccount(ctx context.Context) (string, bool, error) {
	return b.opts.Store.LinkedAccount(ctx)
}

// LoginWait implements bridges.LoginFlow (web.login.wait). Once linked,
// the running bridge connects with the new device.
func (b *Bridge) LoginWait(ctx context.Context) (bridges.LoginChallenge, error) {
	b.mu.Lock()
	l := b.login
	b.mu.Unlock()
	if l == nil {
		return bridges.LoginChallenge{}, errors.New("whatsapp: no linking is under way; start one first (web.login.start)")
	}
	ch, err := l.Next(ctx)
	if errors.Is(err, bridges.ErrLoginRefresh) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ch, err
	}
	b.mu.Lock()
	if b.login == l {
		b.login = nil
	}
	b.mu.Unlock()
	l.Close()
	if err != nil {
		return ch, err
	}
	select {
	case b.relinked <- struct{}{}:
	default:
	}
	return ch, nil
}

// Logout implements bridges.Logouter (channels.logout): the device is
// unlinked on WhatsApp's side and deleted from the store. This and
// `switchboard whatsapp logout` are the only paths that delete
// credentials. When WhatsApp cannot be reached the local credentials are
// deleted anyway (the owner asked) and the error says to remove the
// device on the phone too.
func (b *Bridge) Logout(ctx context.Context) error {
	b.mu.Lock()
	cli, dev := b.cli, b.dev
	b.mu.Unlock()
	if cli != nil && dev != nil && dev.ID != nil {
		b.loggedOut.Store(true)
		err := cli.Logout(ctx)
		b.kick()
		if err != nil {
			if derr := dev.Delete(context.WithoutCancel(ctx)); derr != nil {
				return fmt.Errorf("whatsapp: logout failed (%v) and deleting the local credentials failed too: %w", err, derr)
			}
			return fmt.Errorf("whatsapp: local credentials deleted, but WhatsApp was not told (%v); remove the device under Linked devices on the phone", err)
		}
		return nil
	}
	return LogoutStore(ctx, b.opts.Store, b.opts.NewClient, b.opts.Log)
}

// kick ends the running session (after a logout) so Start waits for a new
// link.
func (b *Bridge) kick() {
	select {
	case b.conn <- ownerLogout{}:
	default:
	}
}

// LogoutStore unlinks the store's device without a running bridge
// (`switchboard whatsapp logout` while the daemon is stopped): it
// connects, asks WhatsApp to remove the device, and deletes it locally
// (locally even when WhatsApp cannot be reached, saying so).
func LogoutStore(ctx context.Context, st *Store, newClient NewClientFunc, log *slog.Logger) error {
	if newClient == nil {
		newClient = NewWhatsmeowClient
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dev, err := st.Device(ctx)
	if err != nil {
		return err
	}
	if dev.ID == nil {
		return errors.New("whatsapp: no account is linked; nothing to log out")
	}
	cli := newClient(dev, log)
	connected := make(chan struct{})
	var once sync.Once
	h := cli.AddEventHandlerWithSuccessStatus(func(evt any) bool {
		if _, ok := evt.(*events.Connected); ok {
			once.Do(func() { close(connected) })
		}
		return true
	})
	defer cli.RemoveEventHandler(h)
	defer cli.Disconnect()
	remote := cli.ConnectContext(ctx)
	if remote == nil {
		wait := time.NewTimer(linkConnectTimeout)
		defer wait.Stop()
		select {
		case <-connected:
			remote = cli.Logout(ctx)
		case <-wait.C:
			remote = errors.New("no login within 30 s")
		case <-ctx.Done():
			remote = ctx.Err()
		}
	}
	if remote == nil {
		return nil
	}
	if err := dev.Delete(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("whatsapp: logout failed (%v) and deleting the local credentials failed too: %w", remote, err)
	}
	return fmt.Errorf("whatsapp: local credentials deleted, but WhatsApp was not told (%v); remove the device under Linked devices on the phone", remote)
}
