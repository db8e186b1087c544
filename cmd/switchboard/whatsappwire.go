package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/queue"
	"github.com/switchboardhq/switchboard/store"
)

// wireWhatsApp adds the WhatsApp bridge when channels.whatsapp is enabled.
// Its device store (the linked device's keys) is open while the bridge
// runs and is closed once the bridge has stopped; nothing here deletes
// it.
func wireWhatsApp(d *daemon, cfg *config.Config, w wiring, bs *bridgeSet, st func() *store.SQLite, disp func() *queue.Dispatcher) {
	wc := cfg.Channels.WhatsApp
	if !wc.Enabled {
		return
	}
	var devices *whatsapp.Store
	var rb *runningBridge
	bs.router.Expect(whatsapp.Channel)
	d.add("whatsapp",
		func(ctx context.Context) (err error) {
			defer bs.router.Settle(whatsapp.Channel)
			devices, err = whatsapp.OpenStore(ctx, whatsapp.StorePath(w.stateDir))
			if err != nil {
				return err
			}
			opts := wc.Options(core.DefaultAgentID, cfg.Session)
			opts.Store = devices
			opts.NewClient = w.whatsappClient
			opts.MentionPatterns = cfg.Messages.GroupChat.MentionPatterns
			opts.MediaDir = filepath.Join(w.stateDir, "media", whatsapp.Channel)
			opts.Log = bs.log.With("channel", whatsapp.Channel)
			b, err := whatsapp.New(opts)
			if err != nil {
				_ = devices.Close()
				return err
			}
			bs.router.AddWith(b, bridges.RouteOptions{Mode: wc.ReplyToMode, Prefix: wc.ResponsePrefix})
			rb = &runningBridge{bridge: b, linked: func(ctx context.Context) (string, bool, error) {
				return linkedAccount(ctx, devices)
			}}
			bs.run(d, rb, gateFor(cfg, b, wc.Access(), b.React, st(), disp(), bs.log))
			return nil
		},
		func(ctx context.Context) error {
			err := bs.stop(ctx)
			select {
			case <-rb.stopped:
			default:
				// Still running: closing the store under it could lose a
				// write to the keys. The process is exiting anyway.
				return errors.Join(err, errors.New("whatsapp: the bridge did not stop in time; its device store was left open"))
			}
			if cerr := devices.Close(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("whatsapp: close the device store: %w", cerr))
			}
			return err
		},
	)
}

// linkedAccount names the account linked in a WhatsApp device store by
// its phone number ("+15551234567").
func linkedAccount(ctx context.Context, devices *whatsapp.Store) (string, bool, error) {
	jid, ok, err := devices.Linked(ctx)
	if err != nil || !ok {
		return "", false, err
	}
	// A device's JID is on the phone-number server: its user is the
	// number.
	return whatsapp.NormalizePhone(jid.User), true, nil
}
