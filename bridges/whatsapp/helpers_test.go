package whatsapp_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// dispatch records what the gate accepts.
type dispatch struct {
	mu  sync.Mutex
	got []core.Inbound
}

func (d *dispatch) Submit(_ context.Context, in *core.Inbound, _ string) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.got = append(d.got, *in)
	return false, nil
}

func (d *dispatch) all() []core.Inbound {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.got)
}

func pairingStore(t *testing.T) *store.SQLite {
	t.Helper()
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
