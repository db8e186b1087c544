package channels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/bridges"
)

// LogoutTimeout bounds a logout: telling the platform, then deleting the
// credentials.
const LogoutTimeout = 45 * time.Second

// Login is what a step of interactive linking shows: a QR code or a
// pairing code with what to do with it, or the linked account, or only a
// message when there is nothing to link.
type Login struct {
	// Message is for people: what to do, or what happened.
	Message string
	// QR is the QR code's payload, QRImage the same as a PNG data: URL.
	QR, QRImage string
	// PairingCode is the code to type on the phone.
	PairingCode string
	// Linked reports the account is linked, as Account.
	Linked  bool
	Account string
}

// Logout logs the account of a bridge out (channels.logout), when its
// platform has logins; a bridge configured with a token says where its
// credentials are instead.
func (s *Supervisor) Logout(ctx context.Context, channel, accountID string) error {
	b, err := s.Bridge(channel, accountID)
	if err != nil {
		return err
	}
	lo, ok := b.(bridges.Logouter)
	if !ok {
		return fmt.Errorf("the %s bridge has no logout: its credentials are in the configuration (channels.%s); remove them there", channel, b.Name())
	}
	ctx, cancel := context.WithTimeout(ctx, LogoutTimeout)
	defer cancel()
	return lo.Logout(ctx)
}

// loginFlow finds the bridge of channel (when empty, the one bridge that
// is linked interactively) and its login flow.
func (s *Supervisor) loginFlow(channel, accountID string) (bridges.Bridge, bridges.LoginFlow, error) {
	if channel == "" {
		s.mu.Lock()
		for _, u := range s.units {
			if _, ok := u.bridge.(bridges.LoginFlow); ok {
				channel = u.desc.Channel
				break
			}
		}
		s.mu.Unlock()
		if channel == "" {
			return nil, nil, fmt.Errorf("%w: no bridge in this daemon is linked by QR or pairing code", ErrNoBridge)
		}
	}
	b, err := s.Bridge(channel, accountID)
	if err != nil {
		return nil, nil, err
	}
	flow, ok := b.(bridges.LoginFlow)
	if !ok {
		return nil, nil, fmt.Errorf("the %s bridge is not linked by QR code: its credentials are in the configuration", channel)
	}
	return b, flow, nil
}

// LoginStart begins linking a bridge's account (web.login.start). An
// account already linked is left alone unless force, which logs it out
// first.
func (s *Supervisor) LoginStart(ctx context.Context, channel, accountID, phone string, force bool) (Login, error) {
	b, flow, err := s.loginFlow(channel, accountID)
	if err != nil {
		return Login{}, err
	}
	label := s.label(b.Name())
	account, linked, err := flow.LinkedAccount(ctx)
	if err != nil {
		return Login{}, err
	}
	if linked && !force {
		return Login{Message: fmt.Sprintf("%s is already linked as %s; use force to relink (it logs %s out first).", label, account, account)}, nil
	}
	var note string
	if linked {
		lo, ok := b.(bridges.Logouter)
		if !ok {
			return Login{}, fmt.Errorf("the %s bridge cannot log out, so it cannot relink", b.Name())
		}
		lctx, cancel := context.WithTimeout(ctx, LogoutTimeout)
		lerr := lo.Logout(lctx)
		cancel()
		if lerr != nil {
			// The local credentials may be gone all the same (the
			// platform was not reachable): then linking goes on.
			if _, still, err := flow.LinkedAccount(ctx); err != nil || still {
				return Login{}, fmt.Errorf("%s: logging %s out before relinking failed: %w", label, account, lerr)
			}
			note = lerr.Error() + "\n"
		}
	}
	ch, err := flow.LoginStart(ctx, phone)
	if errors.Is(err, bridges.ErrAlreadyLinked) {
		// Linked meanwhile.
		return Login{Message: label + " is already linked; use force to relink."}, nil
	}
	if err != nil {
		return Login{}, err
	}
	res, err := challenge(ch)
	res.Message = note + res.Message
	return res, err
}

// LoginWait waits for the linking LoginStart began (web.login.wait): the
// account linked (the bridge, if it was stopped or parked, starts again),
// a fresh QR code, or ctx's end.
func (s *Supervisor) LoginWait(ctx context.Context, channel, accountID string) (Login, error) {
	b, flow, err := s.loginFlow(channel, accountID)
	if err != nil {
		return Login{}, err
	}
	ch, err := flow.LoginWait(ctx)
	switch {
	case errors.Is(err, bridges.ErrLoginRefresh):
		res, err := challenge(ch)
		res.Message = "The QR code expired; scan this new one."
		return res, err
	case err != nil:
		return Login{}, err
	case !ch.Linked:
		return Login{}, fmt.Errorf("%s: linking ended without a linked account; start again", s.label(b.Name()))
	}
	if err := s.StartBridge(b.Name(), b.AccountID()); err != nil {
		return Login{}, err
	}
	return Login{Linked: true, Account: ch.Account, Message: "Linked as " + ch.Account + "."}, nil
}

// challenge is what to show for a login challenge.
func challenge(ch bridges.LoginChallenge) (Login, error) {
	res := Login{PairingCode: ch.PairingCode, Message: ch.Instructions}
	if ch.PairingCode == "" && ch.QR != "" {
		img, err := QRDataURL(ch.QR)
		if err != nil {
			return Login{}, err
		}
		res.QR, res.QRImage = ch.QR, img
	}
	return res, nil
}

// label is a channel's display name.
func (s *Supervisor) label(channel string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range s.units {
		if u.desc.Channel == channel {
			return u.desc.DisplayName()
		}
	}
	return channel
}
