package whatsapp_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.mau.fi/whatsmeow/types"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
	"github.com/switchboardhq/switchboard/bridges/whatsapp/whatsapptest"
	"github.com/switchboardhq/switchboard/core"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var (
	// me is the linked account (device 5 of the phone +15550001111).
	me    = types.NewADJID("15550001111", 0, 5)
	myLID = types.NewJID("99990001111", types.HiddenUserServer)
	ada   = types.NewJID("15557654321", types.DefaultUserServer)
	bob   = types.NewJID("15553334444", types.DefaultUserServer)
	group = types.NewJID("120363403215116621", types.GroupServer)
)

// sleeps is an injected Sleep that returns at once and counts its calls.
type sleeps struct {
	mu    sync.Mutex
	calls []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) bool {
	s.mu.Lock()
	s.calls = append(s.calls, d)
	s.mu.Unlock()
	return ctx.Err() == nil
}

func (s *sleeps) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// rig runs a bridge against a fake phone and a real device store.
type rig struct {
	t      testing.TB
	phone  *whatsapptest.Phone
	path   string
	st     *whatsapp.Store
	b      *whatsapp.Bridge
	sink   bridges.Sink
	rec    *bridgetest.Sink
	sleeps *sleeps
	stop   context.CancelFunc
	done   chan error
}

type rigOptions struct {
	unlinked bool
	path     string
	sink     bridges.Sink // nil: a bridgetest.Sink
	phone    *whatsapptest.Phone
	edit     func(*whatsapp.Options)
}

func newRig(t testing.TB, o rigOptions) *rig {
	t.Helper()
	r := &rig{t: t, phone: o.phone, path: o.path, rec: &bridgetest.Sink{}, sleeps: &sleeps{}, done: make(chan error, 1)}
	if r.phone == nil {
		r.phone = whatsapptest.New()
	}
	if r.path == "" {
		r.path = whatsapp.StorePath(t.TempDir())
	}
	st, err := whatsapp.OpenStore(t.Context(), r.path)
	if err != nil {
		t.Fatal(err)
	}
	r.st = st
	if !o.unlinked {
		link(t, st)
	}
	opts := whatsapp.Options{
		Store: st, NewClient: r.phone.NewClient, MediaDir: filepath.Join(filepath.Dir(filepath.Dir(r.path)), "media", "whatsapp"),
		Session: core.SessionConfig{DMScope: core.DMScopePerChannelPeer}, Sleep: r.sleeps.sleep,
	}
	if o.edit != nil {
		o.edit(&opts)
	}
	if r.b, err = whatsapp.New(opts); err != nil {
		t.Fatal(err)
	}
	r.sink = o.sink
	if r.sink == nil {
		r.sink = r.rec
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.stop = cancel
	go func() { r.done <- r.b.Start(ctx, r.sink) }()
	t.Cleanup(r.shutdown)
	return r
}

// shutdown stops the bridge and closes the store (idempotent).
func (r *rig) shutdown() {
	r.t.Helper()
	if r.stop == nil {
		return
	}
	r.stop()
	r.stop = nil
	select {
	case <-r.done:
	case <-time.After(bridgetest.WaitFor):
		r.t.Error("the bridge did not stop")
	}
	if err := r.st.Close(); err != nil {
		r.t.Error(err)
	}
}

// link saves a linked device (as pairing would) in st.
func link(t testing.TB, st *whatsapp.Store) {
	t.Helper()
	dev, err := st.Device(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if err := whatsapptest.LinkDevice(t.Context(), dev, me, myLID); err != nil {
		t.Fatal(err)
	}
}

// state waits for the bridge's state.
func (r *rig) state(want bridges.State) bridges.Status {
	r.t.Helper()
	if !bridgetest.Eventually(func() bool { return r.b.Status().State == want }) {
		r.t.Fatalf("state %s (%s), want %s", r.b.Status().State, r.b.Status().LastError, want)
	}
	return r.b.Status()
}

// client waits for the bridge's (newest) client to be logged in.
func (r *rig) client() *whatsapptest.Client {
	r.t.Helper()
	r.state(bridges.StateConnected)
	return r.phone.Last()
}

// emit injects evt and reports whether the bridge acked it.
func (r *rig) emit(evt any) bool {
	r.t.Helper()
	return r.client().Emit(evt)
}
