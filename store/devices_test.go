package store

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// What package store promises about devices, pairing requests and device
// tokens is asserted by the conformance suite, storetest.Devices
// (store/storetest/devices.go), which runs on this store too. What is here
// only SQLite can show: what is written to the database file, and survival
// across a reopen of the state directory.

const (
	scopeRead  = "operator.read"
	scopeWrite = "operator.write"
)

// testDevice is a device with a real Ed25519 identity derived from n, so ids
// are what the gateway would compute.
func testDevice(n int, role string, scopes ...string) Device {
	seed := sha256.Sum256([]byte(fmt.Sprintf("device-%d", n)))
	pub := ed25519.NewKeyFromSeed(seed[:]).Public().(ed25519.PublicKey)
	id := sha256.Sum256(pub)
	return Device{
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
func mustPut(t *testing.T, s *SQLite, d Device) {
	t.Helper()
	if err := s.PutDevice(t.Context(), d); err != nil {
		t.Fatalf("PutDevice(%s): %v", d.DisplayName, err)
	}
}

// mustIssue issues a token, failing the test on error.
func mustIssue(t *testing.T, s *SQLite, id, role string, scopes []string, at int64) string {
	t.Helper()
	tok, err := s.IssueDeviceToken(t.Context(), id, role, scopes, at)
	if err != nil {
		t.Fatalf("IssueDeviceToken(%s): %v", id, err)
	}
	if !isLowerHex(tok, 48) {
		t.Fatalf("IssueDeviceToken returned %q, want 48 lowercase hex characters", tok)
	}
	return tok
}

// checkToken returns what tok grants, failing the test on error.
func checkToken(t *testing.T, s *SQLite, tok string) (IssuedToken, bool) {
	t.Helper()
	it, ok, err := s.CheckDeviceToken(t.Context(), tok)
	if err != nil {
		t.Fatalf("CheckDeviceToken: %v", err)
	}
	return it, ok
}

// wantToken fails the test unless tok grants want.
func wantToken(t *testing.T, s *SQLite, tok string, want IssuedToken) {
	t.Helper()
	got, ok := checkToken(t, s, tok)
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("CheckDeviceToken = %+v, %v; want %+v, true", got, ok, want)
	}
}

// wantNoToken fails the test if tok grants anything.
func wantNoToken(t *testing.T, s *SQLite, tok, why string) {
	t.Helper()
	if got, ok := checkToken(t, s, tok); ok {
		t.Fatalf("%s: CheckDeviceToken = %+v, true; want false", why, got)
	}
}

// getDevice returns the paired device id, failing the test unless it exists.
func getDevice(t *testing.T, s *SQLite, id string) Device {
	t.Helper()
	d, ok, err := s.GetDevice(t.Context(), id)
	if err != nil || !ok {
		t.Fatalf("GetDevice(%s) = %v, %v", id, ok, err)
	}
	return d
}

// TestDeviceTokensStoredOnlyAsHashes: the token_hash column holds the
// token's sha256, and no token, issued, rotated, revoked or of a removed
// device, is ever written in plain to the database or its WAL.
func TestDeviceTokensStoredOnlyAsHashes(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)

	d := testDevice(1, RoleOperator, scopeWrite, scopeRead)
	mustPut(t, s, d)
	tok := mustIssue(t, s, d.ID, RoleOperator, []string{scopeRead}, 2_000)
	// Only the hash is stored.
	var hash string
	if err := s.reader.QueryRowContext(ctx, `SELECT token_hash FROM device_tokens`).Scan(&hash); err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256([]byte(tok)); hash != hex.EncodeToString(sum[:]) {
		t.Errorf("token_hash = %s, want sha256 of the token", hash)
	}

	rotated, err := s.RotateDeviceToken(ctx, d.ID, 3_000)
	if err != nil {
		t.Fatalf("RotateDeviceToken: %v", err)
	}
	second := mustIssue(t, s, d.ID, RoleOperator, nil, 0)
	if _, err := s.RevokeDeviceTokens(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	other := testDevice(2, RoleNode)
	mustPut(t, s, other)
	otherTok := mustIssue(t, s, other.ID, RoleNode, nil, 4_000)
	live := mustIssue(t, s, d.ID, RoleOperator, []string{scopeWrite}, 4_000)
	if err := s.RemoveDevice(ctx, d.ID); err != nil {
		t.Fatalf("RemoveDevice: %v", err)
	}

	// No plain token anywhere in the database file.
	closeStore(t, s)
	for _, name := range []string{dbFileName, dbFileName + "-wal"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range []string{tok, rotated, second, live, otherTok} {
			if bytes.Contains(b, []byte(tk)) {
				t.Errorf("%s contains a plain device token", name)
			}
		}
	}
}

func TestDevicesSurviveReopen(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s := openStore(t, dir)
	d := testDevice(1, RoleOperator, scopeRead, scopeWrite)
	d.PairedAt, d.LastSeenAt, d.Remote = 10, 20, true
	mustPut(t, s, d)
	tok := mustIssue(t, s, d.ID, RoleOperator, []string{scopeWrite}, 30)
	req, _, err := s.CreatePairingRequest(ctx, PairingRequest{Device: testDevice(2, RoleNode, "node.x"), IP: "192.0.2.1", CreatedAt: 40})
	if err != nil {
		t.Fatal(err)
	}
	closeStore(t, s)

	s = openStore(t, dir)
	d.Scopes = []string{scopeRead, scopeWrite}
	if got := getDevice(t, s, d.ID); !reflect.DeepEqual(got, d) {
		t.Errorf("device after reopen =\n %+v\nwant\n %+v", got, d)
	}
	wantToken(t, s, tok, IssuedToken{DeviceID: d.ID, Role: RoleOperator, Scopes: []string{scopeWrite}, IssuedAt: 30})
	reqs, err := s.ListPairingRequests(ctx)
	if err != nil || len(reqs) != 1 || !reflect.DeepEqual(reqs[0], req) {
		t.Fatalf("requests after reopen = %+v, %v; want %+v", reqs, err, req)
	}
	// And they still work: approve, rotate.
	if _, err := s.ApprovePairing(ctx, req.RequestID, []string{"node.x"}, 50); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateDeviceToken(ctx, d.ID, 60); err != nil {
		t.Fatal(err)
	}
	wantNoToken(t, s, tok, "pre-reopen token after rotate")
}
