package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/store/sqlstore"
	"go.mau.fi/whatsmeow/types"

	// modernc's pure-Go SQLite registers the "sqlite" driver sqlstore
	// opens below; no cgo.
	_ "modernc.org/sqlite"
)

// StoreFile is the device store's file name under the state directory's
// whatsapp folder.
const StoreFile = "device.db"

// StorePath returns where the device store of stateDir lives.
func StorePath(stateDir string) string {
	return filepath.Join(stateDir, "whatsapp", StoreFile)
}

// Store is the whatsmeow device store: the linked device's keys and
// sessions, in SQLite. Credentials leave it only through an explicit
// logout (Bridge.Logout, `switchboard whatsapp logout`), or when WhatsApp
// itself reports the device removed.
type Store struct {
	container *sqlstore.Container
	path      string
}

// OpenStore opens (creating if needed) the device store at path, with
// foreign keys on, as whatsmeow requires.
func OpenStore(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("whatsapp: device store folder: %w", err)
	}
	q := url.Values{}
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	c, err := sqlstore.New(ctx, "sqlite", "file:"+path+"?"+q.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("whatsapp: open device store %s: %w", path, err)
	}
	// The keys are the account: owner-only.
	if err := os.Chmod(path, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
		_ = c.Close()
		return nil, fmt.Errorf("whatsapp: device store %s: %w", path, err)
	}
	return &Store{container: c, path: path}, nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Device returns the linked device, or a new unlinked one (ID nil) ready
// for pairing.
func (s *Store) Device(ctx context.Context) (*store.Device, error) {
	dev, err := s.container.GetFirstDevice(ctx)
	if err != nil {
		return nil, fmt.Errorf("whatsapp: read device store: %w", err)
	}
	return dev, nil
}

// Linked returns the linked account's JID, or ok false when no device is
// linked.
func (s *Store) Linked(ctx context.Context) (jid types.JID, ok bool, err error) {
	devs, err := s.container.GetAllDevices(ctx)
	if err != nil {
		return types.EmptyJID, false, fmt.Errorf("whatsapp: read device store: %w", err)
	}
	for _, d := range devs {
		if d.ID != nil {
			return *d.ID, true, nil
		}
	}
	return types.EmptyJID, false, nil
}

// LinkedAccount names the linked account by its phone number
// ("+15551234567"), linked false when no device is linked.
func (s *Store) LinkedAccount(ctx context.Context) (account string, linked bool, err error) {
	jid, ok, err := s.Linked(ctx)
	if err != nil || !ok {
		return "", false, err
	}
	// A device's JID is on the phone-number server: its user is the
	// number.
	return NormalizePhone(jid.User), true, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.container.Close() }
