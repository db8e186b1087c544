package storetest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/store"
)

// Scopes the Devices suite grants; the store compares them as plain strings.
const (
	scopeAdmin    = "operator.admin"
	scopeRead     = "operator.read"
	scopeWrite    = "operator.write"
	scopePairing  = "operator.pairing"
	scopeApproval = "operator.approvals"
)

// devicesOpener is the opener Devices takes: a fresh store whose clock is
// now (nil: time.Now).
type devicesOpener = func(t *testing.T, now func() time.Time) store.Devices

// Devices asserts store.Devices: a paired device round-trips with its
// scopes normalized, is replaced whole by PutDevice (its tokens kept, and
// narrowed or retired when checked) and listed most recently paired first;
// LastSeenAt never moves backwards; invalid devices and request ids are
// refused with an error naming the field. Pairing requests are one per
// device (also when a device asks many times at once), capped at
// store.MaxPendingPairingRequests, listed newest first, approved with
// exactly the scopes given (a repair narrows or retires live tokens),
// rejected, and pruned strictly before the cutoff. Tokens are 48 hex
// characters, match only exactly, never exceed the device's grant (also
// over random grants and later narrowing), are rotated, revoked (with a
// count) and revoked for good by unpairing, and a device keeps at most
// store.MaxDeviceTokens of them, its newest, also when they are issued
// concurrently. Unknown ids fail with store.ErrUnknownDevice or
// store.ErrUnknownPairingRequest naming the id; a canceled context fails
// the call. Zero times are the store's clock. open's store takes its time
// from now.
func Devices(t *testing.T, open func(t *testing.T, now func() time.Time) store.Devices) {
	t.Run("lifecycle", func(t *testing.T) { devicesTokenLifecycle(t, open) })
	t.Run("put", func(t *testing.T) { devicesPutReplacesAndKeepsTokens(t, open) })
	t.Run("list", func(t *testing.T) { devicesListAndScopeNormalization(t, open) })
	t.Run("requests", func(t *testing.T) { devicesPairingRequestDeduplicates(t, open) })
	t.Run("request-limit", func(t *testing.T) { devicesPairingRequestLimit(t, open) })
	t.Run("approve", func(t *testing.T) { devicesApprovePairing(t, open) })
	t.Run("reject-prune", func(t *testing.T) { devicesRejectAndPrunePairing(t, open) })
	t.Run("unknown-ids", func(t *testing.T) { devicesUnknownIDs(t, open) })
	t.Run("validation", func(t *testing.T) { devicesValidation(t, open) })
	t.Run("grant", func(t *testing.T) { devicesTokenNeverExceedsGrant(t, open) })
	t.Run("token-cap", func(t *testing.T) { devicesTokenCap(t, open) })
	t.Run("token-cap-race", func(t *testing.T) { devicesTokenCapRace(t, open) })
	t.Run("concurrent-tokens", func(t *testing.T) { devicesConcurrentTokens(t, open) })
	t.Run("context", func(t *testing.T) { devicesHonourContext(t, open) })
}

// testDevice is a device with a real Ed25519 identity derived from n, so ids
// are what the gateway would compute.
func testDevice(n int, role string, scopes ...string) store.Device {
	seed := sha256.Sum256(fmt.Appendf(nil, "device-%d", n))
	pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
	id := sha256.Sum256(pub)
	return store.Device{
		ID:           hex.EncodeToString(id[:]),
		PublicKey:    base64.RawURLEncoding.EncodeToString(pub),
		Role:         role,
		Scopes:       scopes,
		ClientID:     "openclaw-macos",
		ClientMode:   "ui",
		Platform:     "macos",
		DeviceFamily: "mac",
		DisplayName:  fmt.Sprintf("Laptop %d", n),
	}
}

// mustPut pairs d, failing the test on error.
func mustPut(t *testing.T, s store.Devices, d store.Device) {
	t.Helper()
	if err := s.PutDevice(t.Context(), d); err != nil {
		t.Fatalf("PutDevice(%s): %v", d.DisplayName, err)
	}
}

// tokenShape is what IssueDeviceToken and RotateDeviceToken return.
var tokenShape = regexp.MustCompile(`^[0-9a-f]{48}$`)

// mustIssue issues a token, failing the test on error.
func mustIssue(t *testing.T, s store.Devices, id, role string, scopes []string, at int64) string {
	t.Helper()
	tok, err := s.IssueDeviceToken(t.Context(), id, role, scopes, at)
	if err != nil {
		t.Fatalf("IssueDeviceToken(%s): %v", id, err)
	}
	if !tokenShape.MatchString(tok) {
		t.Fatalf("IssueDeviceToken returned %q, want 48 lowercase hex characters", tok)
	}
	return tok
}

// checkToken returns what tok grants, failing the test on error.
func checkToken(t *testing.T, s store.Devices, tok string) (store.IssuedToken, bool) {
	t.Helper()
	it, ok, err := s.CheckDeviceToken(t.Context(), tok)
	if err != nil {
		t.Fatalf("CheckDeviceToken: %v", err)
	}
	return it, ok
}

// wantToken fails the test unless tok grants want.
func wantToken(t *testing.T, s store.Devices, tok string, want store.IssuedToken) {
	t.Helper()
	got, ok := checkToken(t, s, tok)
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("CheckDeviceToken = %+v, %v; want %+v, true", got, ok, want)
	}
}

// wantNoToken fails the test if tok grants anything.
func wantNoToken(t *testing.T, s store.Devices, tok, why string) {
	t.Helper()
	if got, ok := checkToken(t, s, tok); ok {
		t.Fatalf("%s: CheckDeviceToken = %+v, true; want false", why, got)
	}
}

// getDevice returns the paired device id, failing the test unless it exists.
func getDevice(t *testing.T, s store.Devices, id string) store.Device {
	t.Helper()
	d, ok, err := s.GetDevice(t.Context(), id)
	if err != nil || !ok {
		t.Fatalf("GetDevice(%s) = %v, %v", id, ok, err)
	}
	return d
}

// wantTokenCount revokes the device's tokens and fails the test unless there
// were n: how the suite counts a device's tokens through the interface.
func wantTokenCount(t *testing.T, s store.Devices, id string, n int64, why string) {
	t.Helper()
	if got, err := s.RevokeDeviceTokens(t.Context(), id); got != n || err != nil {
		t.Errorf("%s: RevokeDeviceTokens = %d, %v; want %d tokens", why, got, err, n)
	}
}

func devicesTokenLifecycle(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(1_000)
	s := open(t, clock.Now)

	d := testDevice(1, store.RoleOperator, scopeWrite, scopeRead)
	d.PairedAt, d.LastSeenAt, d.Remote = 500, 600, true
	mustPut(t, s, d)
	d.Scopes = []string{scopeRead, scopeWrite} // stored sorted
	if got := getDevice(t, s, d.ID); !reflect.DeepEqual(got, d) {
		t.Fatalf("GetDevice =\n %+v\nwant\n %+v", got, d)
	}

	tok := mustIssue(t, s, d.ID, store.RoleOperator, []string{scopeRead}, 2_000)
	wantToken(t, s, tok, store.IssuedToken{DeviceID: d.ID, Role: store.RoleOperator, Scopes: []string{scopeRead}, IssuedAt: 2_000})
	// A token that differs in case or length is not the token.
	wantNoToken(t, s, strings.ToUpper(tok), "upper-case token")
	wantNoToken(t, s, tok[:47], "short token")
	wantNoToken(t, s, tok+"0", "long token")

	rotated, err := s.RotateDeviceToken(ctx, d.ID, 3_000)
	if err != nil {
		t.Fatalf("RotateDeviceToken: %v", err)
	}
	if !tokenShape.MatchString(rotated) {
		t.Fatalf("RotateDeviceToken returned %q, want 48 lowercase hex characters", rotated)
	}
	if rotated == tok {
		t.Fatal("RotateDeviceToken returned the old token")
	}
	wantNoToken(t, s, tok, "old token after rotate")
	// The rotated token carries the device's paired grant.
	wantToken(t, s, rotated, store.IssuedToken{DeviceID: d.ID, Role: store.RoleOperator, Scopes: []string{scopeRead, scopeWrite}, IssuedAt: 3_000})

	second := mustIssue(t, s, d.ID, store.RoleOperator, nil, 0) // zero time: the store's clock
	wantToken(t, s, second, store.IssuedToken{DeviceID: d.ID, Role: store.RoleOperator, Scopes: []string{}, IssuedAt: 1_000})
	if n, err := s.RevokeDeviceTokens(ctx, d.ID); n != 2 || err != nil {
		t.Fatalf("RevokeDeviceTokens = %d, %v; want 2", n, err)
	}
	wantNoToken(t, s, rotated, "rotated token after revoke")
	wantNoToken(t, s, second, "second token after revoke")
	if n, err := s.RevokeDeviceTokens(ctx, d.ID); n != 0 || err != nil {
		t.Fatalf("RevokeDeviceTokens again = %d, %v; want 0, nil", n, err)
	}

	// Remove: tokens and the pending (repair) request go with the device;
	// another device's are untouched.
	other := testDevice(2, store.RoleNode)
	mustPut(t, s, other)
	otherTok := mustIssue(t, s, other.ID, store.RoleNode, nil, 4_000)
	live := mustIssue(t, s, d.ID, store.RoleOperator, []string{scopeWrite}, 4_000)
	if _, _, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(1, store.RoleOperator, scopeAdmin)}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(3, store.RoleOperator)}); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveDevice(ctx, d.ID); err != nil {
		t.Fatalf("RemoveDevice: %v", err)
	}
	if _, ok, err := s.GetDevice(ctx, d.ID); ok || err != nil {
		t.Fatalf("GetDevice after remove = %v, %v", ok, err)
	}
	wantNoToken(t, s, live, "token of a removed device")
	reqs, err := s.ListPairingRequests(ctx)
	if err != nil || len(reqs) != 1 || reqs[0].Device.ID != testDevice(3, "").ID {
		t.Fatalf("requests after remove = %+v, %v; want only device 3's", reqs, err)
	}
	wantToken(t, s, otherTok, store.IssuedToken{DeviceID: other.ID, Role: store.RoleNode, Scopes: []string{}, IssuedAt: 4_000})
	if err := s.RemoveDevice(ctx, d.ID); !errors.Is(err, store.ErrUnknownDevice) {
		t.Fatalf("RemoveDevice twice: %v; want ErrUnknownDevice", err)
	}
	// Removal revoked the tokens for good: paired again under the same id
	// and grant, the device has none, and none of its old ones works.
	mustPut(t, s, d)
	for _, tk := range []string{tok, rotated, second, live} {
		wantNoToken(t, s, tk, "token of a removed device, after it paired again")
	}
	wantTokenCount(t, s, d.ID, 0, "a removed device paired again")
}

func devicesPutReplacesAndKeepsTokens(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(1)
	s := open(t, clock.Now)
	d := testDevice(1, store.RoleOperator, scopeAdmin, scopeRead, scopeWrite)
	d.PairedAt = 10
	mustPut(t, s, d)
	tok := mustIssue(t, s, d.ID, store.RoleOperator, []string{scopeAdmin, scopeRead}, 20)

	// Narrowing the device narrows the live token.
	d.Scopes = []string{scopeRead}
	d.DisplayName = "renamed"
	mustPut(t, s, d)
	if got := getDevice(t, s, d.ID); got.DisplayName != "renamed" || !reflect.DeepEqual(got.Scopes, []string{scopeRead}) {
		t.Fatalf("after PutDevice: %+v", got)
	}
	wantToken(t, s, tok, store.IssuedToken{DeviceID: d.ID, Role: store.RoleOperator, Scopes: []string{scopeRead}, IssuedAt: 20})
	// Widening it again does not widen the token beyond what it was issued.
	d.Scopes = []string{scopeAdmin, scopeRead, scopeWrite}
	mustPut(t, s, d)
	wantToken(t, s, tok, store.IssuedToken{DeviceID: d.ID, Role: store.RoleOperator, Scopes: []string{scopeAdmin, scopeRead}, IssuedAt: 20})
	// A different role invalidates it, but PutDevice keeps it.
	d.Role = store.RoleNode
	mustPut(t, s, d)
	wantNoToken(t, s, tok, "token after the device's role changed")
	wantTokenCount(t, s, d.ID, 1, "PutDevice deleted tokens")

	// Zero PairedAt is the store's clock.
	clock.Set(777)
	d2 := testDevice(2, store.RoleNode)
	mustPut(t, s, d2)
	if got := getDevice(t, s, d2.ID); got.PairedAt != 777 || got.Scopes == nil || len(got.Scopes) != 0 {
		t.Errorf("zero PairedAt: %+v; want 777 and empty non-nil scopes", got)
	}
	if err := s.TouchDevice(ctx, d2.ID, 900); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchDevice(ctx, d2.ID, 800); err != nil { // late, out of order
		t.Fatal(err)
	}
	if got := getDevice(t, s, d2.ID); got.LastSeenAt != 900 {
		t.Errorf("LastSeenAt = %d, want 900 (never backwards)", got.LastSeenAt)
	}
}

func devicesListAndScopeNormalization(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	s := open(t, nil)
	if got, err := s.ListDevices(ctx); err != nil || len(got) != 0 {
		t.Fatalf("ListDevices on an empty store = %v, %v", got, err)
	}
	var want []string
	for i, at := range []int64{30, 10, 20} {
		d := testDevice(i, store.RoleOperator, " operator.write", scopeRead, "", scopeRead+" ", scopeAdmin)
		d.PairedAt = at
		mustPut(t, s, d)
	}
	for _, i := range []int{0, 2, 1} { // newest paired first
		want = append(want, testDevice(i, "").ID)
	}
	got, err := s.ListDevices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range got {
		ids = append(ids, d.ID)
		if wantScopes := []string{scopeAdmin, scopeRead, scopeWrite}; !reflect.DeepEqual(d.Scopes, wantScopes) {
			t.Errorf("scopes = %q, want %q", d.Scopes, wantScopes)
		}
	}
	if !slices.Equal(ids, want) {
		t.Errorf("ListDevices order = %v, want %v", ids, want)
	}
}

func devicesPairingRequestDeduplicates(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(5_000)
	s := open(t, clock.Now)

	d := testDevice(1, store.RoleOperator, scopeRead)
	first, created, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: d, IP: "192.0.2.7"})
	if err != nil || !created {
		t.Fatalf("CreatePairingRequest = %v, %v", created, err)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if !uuid.MatchString(first.RequestID) {
		t.Errorf("generated RequestID %q is not a v4 UUID", first.RequestID)
	}
	if first.CreatedAt != 5_000 || first.IP != "192.0.2.7" || first.Device.ID != d.ID {
		t.Errorf("created request = %+v", first)
	}

	// The device reconnects asking for more, from elsewhere: it keeps its one
	// request, unchanged.
	again := testDevice(1, store.RoleOperator, scopeAdmin)
	got, created, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: again, IP: "198.51.100.1", CreatedAt: 9_000})
	if err != nil || created {
		t.Fatalf("second CreatePairingRequest = %v, %v; want existing", created, err)
	}
	if !reflect.DeepEqual(got, first) {
		t.Errorf("second CreatePairingRequest returned\n %+v\nwant the first\n %+v", got, first)
	}
	list, err := s.ListPairingRequests(ctx)
	if err != nil || len(list) != 1 || !reflect.DeepEqual(list[0], first) {
		t.Fatalf("ListPairingRequests = %+v, %v; want just the first", list, err)
	}

	// Concurrent requests from one new device: one is created, all agree.
	nd := testDevice(2, store.RoleNode)
	const n = 16
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ids     = map[string]int{}
		creates int
	)
	for i := range n {
		wg.Go(func() {
			r, c, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: nd, IP: fmt.Sprint(i)})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids[r.RequestID]++
			if c {
				creates++
			}
		})
	}
	wg.Wait()
	if len(ids) != 1 || creates != 1 {
		t.Errorf("concurrent requests: ids %v, %d created; want one id, one created", ids, creates)
	}

	// A caller-chosen id is kept; an unsafe one is refused.
	mine, created, err := s.CreatePairingRequest(ctx, store.PairingRequest{RequestID: "req_3-x", Device: testDevice(3, store.RoleOperator), CreatedAt: 7_000})
	if err != nil || !created || mine.RequestID != "req_3-x" || mine.CreatedAt != 7_000 {
		t.Errorf("caller-chosen id: %+v, %v, %v", mine, created, err)
	}
	for _, bad := range []string{"a/b", "a b", "ü", strings.Repeat("a", 129)} {
		if _, _, err := s.CreatePairingRequest(ctx, store.PairingRequest{RequestID: bad, Device: testDevice(4, store.RoleOperator)}); err == nil || !strings.Contains(err.Error(), "URL-safe") {
			t.Errorf("request id %q: %v; want refused", bad, err)
		}
	}
	list, _ = s.ListPairingRequests(ctx)
	var order []int64
	for _, r := range list {
		order = append(order, r.CreatedAt)
	}
	if !slices.Equal(order, []int64{7_000, 5_000, 5_000}) {
		t.Errorf("ListPairingRequests created_at order = %v, want newest first", order)
	}
}

func devicesPairingRequestLimit(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	s := open(t, nil)
	for i := range store.MaxPendingPairingRequests {
		if _, _, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(i, store.RoleOperator)}); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	_, _, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(-1, store.RoleOperator)})
	if !errors.Is(err, store.ErrTooManyPairingRequests) || !strings.Contains(err.Error(), "approve or reject") {
		t.Fatalf("request over the limit: %v; want ErrTooManyPairingRequests saying what to do", err)
	}
	// A device with a pending request still finds it.
	if _, created, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(0, store.RoleOperator)}); err != nil || created {
		t.Fatalf("re-request at the limit = %v, %v; want the existing request", created, err)
	}
}

func devicesApprovePairing(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	clock := &Clock{}
	clock.Set(1)
	s := open(t, clock.Now)

	asked := testDevice(1, store.RoleOperator, scopeAdmin, scopeRead, scopeWrite)
	asked.Remote = true
	req, _, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: asked, IP: "192.0.2.7", CreatedAt: 100})
	if err != nil {
		t.Fatal(err)
	}
	// The approver may grant only read and pairing: exactly that is paired.
	d, err := s.ApprovePairing(ctx, req.RequestID, []string{scopePairing, scopeRead, scopeRead}, 200)
	if err != nil {
		t.Fatalf("ApprovePairing: %v", err)
	}
	want := asked
	want.Scopes = []string{scopePairing, scopeRead}
	want.PairedAt, want.LastSeenAt = 200, 100
	if !reflect.DeepEqual(d, want) {
		t.Fatalf("ApprovePairing =\n %+v\nwant\n %+v", d, want)
	}
	if got := getDevice(t, s, asked.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("GetDevice after approve =\n %+v\nwant\n %+v", got, want)
	}
	if reqs, _ := s.ListPairingRequests(ctx); len(reqs) != 0 {
		t.Errorf("request still pending after approve: %+v", reqs)
	}
	if _, err := s.ApprovePairing(ctx, req.RequestID, nil, 300); !errors.Is(err, store.ErrUnknownPairingRequest) {
		t.Errorf("approve twice: %v; want ErrUnknownPairingRequest", err)
	}
	if _, err := s.IssueDeviceToken(ctx, asked.ID, store.RoleOperator, []string{scopeAdmin}, 300); !errors.Is(err, store.ErrExceedsGrant) {
		t.Errorf("token for a scope asked for but not approved: %v; want ErrExceedsGrant", err)
	}
	tok := mustIssue(t, s, asked.ID, store.RoleOperator, []string{scopePairing, scopeRead}, 300)
	if err := s.TouchDevice(ctx, asked.ID, 400); err != nil {
		t.Fatal(err)
	}

	// A repair with narrower scopes narrows the live token and keeps
	// LastSeenAt.
	repair, created, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(1, store.RoleOperator, scopeRead), CreatedAt: 350})
	if err != nil || !created {
		t.Fatal(created, err)
	}
	d, err = s.ApprovePairing(ctx, repair.RequestID, []string{scopeRead}, 500)
	if err != nil {
		t.Fatal(err)
	}
	if d.PairedAt != 500 || d.LastSeenAt != 400 || d.Remote || !slices.Equal(d.Scopes, []string{scopeRead}) {
		t.Errorf("repaired device = %+v", d)
	}
	wantToken(t, s, tok, store.IssuedToken{DeviceID: asked.ID, Role: store.RoleOperator, Scopes: []string{scopeRead}, IssuedAt: 300})

	// A repair to another role retires the operator token.
	repair, _, err = s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(1, store.RoleNode), CreatedAt: 600})
	if err != nil {
		t.Fatal(err)
	}
	clock.Set(650)
	if d, err = s.ApprovePairing(ctx, repair.RequestID, nil, 0); err != nil || d.Role != store.RoleNode || d.PairedAt != 650 {
		t.Fatalf("role repair = %+v, %v", d, err)
	}
	wantNoToken(t, s, tok, "operator token after repair to node")
}

func devicesRejectAndPrunePairing(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	s := open(t, nil)
	var reqs []store.PairingRequest
	for i, at := range []int64{100, 200, 300, 400} {
		r, _, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(i, store.RoleOperator), CreatedAt: at})
		if err != nil {
			t.Fatal(err)
		}
		reqs = append(reqs, r)
	}
	if err := s.RejectPairing(ctx, reqs[3].RequestID); err != nil {
		t.Fatalf("RejectPairing: %v", err)
	}
	if err := s.RejectPairing(ctx, reqs[3].RequestID); !errors.Is(err, store.ErrUnknownPairingRequest) {
		t.Fatalf("reject twice: %v; want ErrUnknownPairingRequest", err)
	}
	if _, ok, _ := s.GetDevice(ctx, reqs[3].Device.ID); ok {
		t.Error("a rejected device is paired")
	}

	if n, err := s.PrunePairingRequests(ctx, 200); n != 1 || err != nil { // strictly before
		t.Fatalf("PrunePairingRequests(200) = %d, %v; want 1", n, err)
	}
	left, _ := s.ListPairingRequests(ctx)
	if len(left) != 2 || left[0].RequestID != reqs[2].RequestID || left[1].RequestID != reqs[1].RequestID {
		t.Fatalf("after prune: %+v", left)
	}
	if _, err := s.ApprovePairing(ctx, reqs[0].RequestID, nil, 500); !errors.Is(err, store.ErrUnknownPairingRequest) {
		t.Errorf("approving a pruned request: %v; want ErrUnknownPairingRequest", err)
	}
	// An expired device asks again and gets a new request.
	r, created, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: testDevice(0, store.RoleOperator), CreatedAt: 600})
	if err != nil || !created || r.RequestID == reqs[0].RequestID {
		t.Errorf("request after expiry = %+v, %v, %v; want a new one", r, created, err)
	}
	if n, err := s.PrunePairingRequests(ctx, 1_000); n != 3 || err != nil {
		t.Fatalf("PrunePairingRequests(1000) = %d, %v; want 3", n, err)
	}
}

func devicesUnknownIDs(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	s := open(t, nil)
	id := testDevice(9, "").ID
	for name, err := range map[string]error{
		"TouchDevice":  s.TouchDevice(ctx, id, 1),
		"RemoveDevice": s.RemoveDevice(ctx, id),
		"IssueDeviceToken": func() error {
			_, err := s.IssueDeviceToken(ctx, id, store.RoleOperator, nil, 1)
			return err
		}(),
		"RotateDeviceToken": func() error { _, err := s.RotateDeviceToken(ctx, id, 1); return err }(),
		"RevokeDeviceTokens": func() error {
			n, err := s.RevokeDeviceTokens(ctx, id)
			if n != 0 {
				t.Errorf("RevokeDeviceTokens of an unknown device = %d", n)
			}
			return err
		}(),
		"RemoveDevice(malformed)": s.RemoveDevice(ctx, "not-an-id"),
	} {
		if !errors.Is(err, store.ErrUnknownDevice) || !strings.Contains(err.Error(), id) && !strings.Contains(err.Error(), "not-an-id") {
			t.Errorf("%s: %v; want ErrUnknownDevice naming the id", name, err)
		}
	}
	for name, err := range map[string]error{
		"ApprovePairing": func() error { _, err := s.ApprovePairing(ctx, "nope", nil, 1); return err }(),
		"RejectPairing":  s.RejectPairing(ctx, "nope"),
	} {
		if !errors.Is(err, store.ErrUnknownPairingRequest) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("%s: %v; want ErrUnknownPairingRequest naming the id", name, err)
		}
	}
	if _, ok, err := s.GetDevice(ctx, id); ok || err != nil {
		t.Errorf("GetDevice(unknown) = %v, %v", ok, err)
	}
	for _, tok := range []string{"", strings.Repeat("0", 48), "x", strings.Repeat("g", 48)} {
		wantNoToken(t, s, tok, fmt.Sprintf("token %q", tok))
	}
}

func devicesValidation(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	s := open(t, nil)
	good := testDevice(1, store.RoleOperator)
	for _, tc := range []struct {
		name   string
		mutate func(*store.Device)
		want   string
	}{
		{"empty id", func(d *store.Device) { d.ID = "" }, "sha256 hex"},
		{"upper-case id", func(d *store.Device) { d.ID = strings.ToUpper(d.ID) }, "sha256 hex"},
		{"public key as id", func(d *store.Device) { d.ID = d.PublicKey }, "sha256 hex"},
		{"no public key", func(d *store.Device) { d.PublicKey = " " }, "public key is required"},
		{"no role", func(d *store.Device) { d.Role = "" }, `role "" is not`},
		{"unknown role", func(d *store.Device) { d.Role = "admin" }, `role "admin" is not`},
	} {
		d := good
		tc.mutate(&d)
		if err := s.PutDevice(ctx, d); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PutDevice, %s: %v; want %q", tc.name, err, tc.want)
		}
		if _, _, err := s.CreatePairingRequest(ctx, store.PairingRequest{Device: d}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CreatePairingRequest, %s: %v; want %q", tc.name, err, tc.want)
		}
	}
	if got, _ := s.ListDevices(ctx); len(got) != 0 {
		t.Errorf("invalid devices were stored: %+v", got)
	}
}

func devicesTokenNeverExceedsGrant(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	s := open(t, nil)
	d := testDevice(1, store.RoleOperator, scopeRead, scopeWrite)
	mustPut(t, s, d)
	for _, tc := range []struct {
		role   string
		scopes []string
	}{
		{store.RoleNode, nil},
		{"", nil},
		{store.RoleOperator, []string{scopeAdmin}},
		{store.RoleOperator, []string{scopeRead, scopeWrite, scopeApproval}},
		{store.RoleOperator, []string{"operator.read.extra"}},
	} {
		if tok, err := s.IssueDeviceToken(ctx, d.ID, tc.role, tc.scopes, 1); !errors.Is(err, store.ErrExceedsGrant) || tok != "" {
			t.Errorf("IssueDeviceToken(%q, %q) = %q, %v; want ErrExceedsGrant", tc.role, tc.scopes, tok, err)
		}
	}
	wantTokenCount(t, s, d.ID, 0, "refused issues stored tokens")

	// Property: over random device grants, requests and later narrowing, a
	// token is issued iff it is within the device's grant, and a check never
	// returns more than the device holds now.
	all := []string{scopeAdmin, scopeRead, scopeWrite, scopeApproval, scopePairing, "operator.talk.secrets"}
	subset := func(r *rand.Rand) []string {
		var out []string
		for _, sc := range all {
			if r.IntN(2) == 0 {
				out = append(out, sc)
			}
		}
		return out
	}
	within := func(a, b []string) bool {
		for _, sc := range a {
			if !slices.Contains(b, sc) {
				return false
			}
		}
		return true
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		dev := testDevice(100+i%10, store.RoleOperator, subset(r)...)
		mustPut(t, s, dev)
		asked := subset(r)
		tok, err := s.IssueDeviceToken(ctx, dev.ID, store.RoleOperator, asked, int64(i))
		if ok := within(asked, dev.Scopes); ok != (err == nil) {
			t.Fatalf("case %d: device %q, asked %q: issue error %v", i, dev.Scopes, asked, err)
		}
		if err != nil && !errors.Is(err, store.ErrExceedsGrant) {
			t.Fatalf("case %d: %v", i, err)
		}
		if tok == "" {
			continue
		}
		dev.Scopes = subset(r)
		mustPut(t, s, dev)
		it, ok := checkToken(t, s, tok)
		if !ok || !within(it.Scopes, dev.Scopes) || !within(it.Scopes, asked) {
			t.Fatalf("case %d: token asked %q, device now %q: check = %q, %v", i, asked, dev.Scopes, it.Scopes, ok)
		}
	}
}

func devicesTokenCap(t *testing.T, open devicesOpener) {
	s := open(t, nil)
	d := testDevice(1, store.RoleOperator)
	mustPut(t, s, d)
	var toks []string
	for range store.MaxDeviceTokens + 2 {
		// The same millisecond for all: the order of issue breaks the tie.
		toks = append(toks, mustIssue(t, s, d.ID, store.RoleOperator, nil, 42))
	}
	for i, tok := range toks {
		_, ok := checkToken(t, s, tok)
		if want := i >= 2; ok != want {
			t.Errorf("token %d of %d: valid = %v, want %v (the newest %d stay)", i, len(toks), ok, want, store.MaxDeviceTokens)
		}
	}
	wantTokenCount(t, s, d.ID, store.MaxDeviceTokens, "tokens after the cap")
}

// devicesTokenCapRace: many tokens issued for one device at once (instances
// answering one device's reconnects, in the same millisecond) all succeed;
// each is then valid or revoked by the cap, and the device is left with
// exactly store.MaxDeviceTokens: never more, and no more revoked than the
// oldest.
func devicesTokenCapRace(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	s := open(t, nil)
	d := testDevice(1, store.RoleOperator, scopeRead)
	mustPut(t, s, d)
	const n = 4 * store.MaxDeviceTokens
	toks := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tok, err := s.IssueDeviceToken(ctx, d.ID, store.RoleOperator, []string{scopeRead}, 42)
			if err != nil {
				t.Errorf("concurrent issue %d: %v", i, err)
				return
			}
			if !tokenShape.MatchString(tok) {
				t.Errorf("concurrent issue %d returned %q, want 48 lowercase hex characters", i, tok)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	want := store.IssuedToken{DeviceID: d.ID, Role: store.RoleOperator, Scopes: []string{scopeRead}, IssuedAt: 42}
	seen := map[string]bool{}
	live := 0
	for i, tok := range toks {
		if tok == "" {
			continue // its issue failed, reported above
		}
		if seen[tok] {
			t.Errorf("token %d was issued twice", i)
		}
		seen[tok] = true
		it, ok, err := s.CheckDeviceToken(ctx, tok)
		switch {
		case err != nil:
			t.Errorf("check of token %d: %v", i, err)
		case !ok: // revoked by the cap
		case !reflect.DeepEqual(it, want):
			t.Errorf("token %d grants %+v, want %+v", i, it, want)
		default:
			live++
		}
	}
	if live > store.MaxDeviceTokens {
		t.Errorf("%d of %d tokens issued at once are live; the cap is %d", live, n, store.MaxDeviceTokens)
	}
	if live < store.MaxDeviceTokens {
		t.Errorf("%d of %d tokens issued at once are live; want %d (each issue revokes only the oldest)", live, n, store.MaxDeviceTokens)
	}
	wantTokenCount(t, s, d.ID, int64(live), "tokens after concurrent issues (the live ones, no others)")
}

// devicesConcurrentTokens: devices issuing, checking and touching at once,
// each from its own goroutine, keep their own tokens and the cap each.
func devicesConcurrentTokens(t *testing.T, open devicesOpener) {
	ctx := t.Context()
	s := open(t, nil)
	const devices = 4
	for i := range devices {
		mustPut(t, s, testDevice(i, store.RoleOperator, scopeRead))
	}
	var wg sync.WaitGroup
	for i := range devices {
		id := testDevice(i, "").ID
		wg.Go(func() {
			for j := range 20 {
				tok, err := s.IssueDeviceToken(ctx, id, store.RoleOperator, []string{scopeRead}, int64(j))
				if err != nil {
					t.Error(err)
					return
				}
				it, ok, err := s.CheckDeviceToken(ctx, tok)
				if err != nil || !ok || it.DeviceID != id {
					t.Errorf("check own fresh token = %+v, %v, %v", it, ok, err)
					return
				}
				if err := s.TouchDevice(ctx, id, int64(j)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range devices {
		wantTokenCount(t, s, testDevice(i, "").ID, store.MaxDeviceTokens, fmt.Sprintf("device %d after concurrent issues", i))
	}
}

func devicesHonourContext(t *testing.T, open devicesOpener) {
	s := open(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d := testDevice(1, store.RoleOperator)
	if err := s.PutDevice(ctx, d); !errors.Is(err, context.Canceled) {
		t.Errorf("PutDevice with a canceled context: %v", err)
	}
	if _, err := s.IssueDeviceToken(ctx, d.ID, store.RoleOperator, nil, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("IssueDeviceToken with a canceled context: %v", err)
	}
}
