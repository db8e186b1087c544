package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Golden identity: the Ed25519 key from the seed of 32 bytes of 0x01.
// Ed25519 signatures are deterministic, so the signatures below are fixed.
const (
	goldenPublicKey    = "iojj3XQJ8ZX9UtstPLpdcspnCb8dlBIb83SIAbQPb1w"
	goldenDeviceID     = "34750f98bd59fcfc946da45aaabe933be154a4b5094e1c4abf42866505f3c97e"
	goldenPublicKeyPEM = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAiojj3XQJ8ZX9UtstPLpdcspnCb8dlBIb83SIAbQPb1w=\n-----END PUBLIC KEY-----\n"
	// Signatures over goldenFields' v3 and v2 payloads.
	goldenSigV3 = "DAv9GnvouB04WWDznVE5clHCMeBGxC_p846dptc-dJQyPoDSBa5qn02gfa3sUMGNilDPYMBnB-Ozrp61ZVwlCg"
	goldenSigV2 = "mNNN-l9Coqw0gsRQKuUZGte5GzHjeA4PM8uKyhNi-6cNZFKyanNGJsdwXbKVFBz_vdPCwKlzWX64WOKfzZhTCg"
	goldenNonce = "nonce-abc"
)

var goldenSignedAt = time.UnixMilli(1_700_000_000_000)

func goldenKey() ed25519.PrivateKey { return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, 32)) }

// goldenFields are device-auth.test.ts's v3 vector, signed by the golden key.
func goldenFields() SignatureFields {
	return SignatureFields{
		DeviceID: goldenDeviceID, ClientID: "openclaw-macos", ClientMode: "ui", Role: "operator",
		Scopes: []string{"operator.admin", "operator.read"}, SignedAtMs: goldenSignedAt.UnixMilli(),
		Token: "tok-123", Nonce: goldenNonce, Platform: "  IOS  ", DeviceFamily: "  iPhone  ",
	}
}

func goldenProof(sig string) DeviceProof {
	return DeviceProof{ID: goldenDeviceID, PublicKey: goldenPublicKey, Signature: sig,
		SignedAt: goldenSignedAt.UnixMilli(), Nonce: goldenNonce}
}

// Vectors from OpenClaw's src/gateway/device-auth.test.ts.
func TestPayloadVectors(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"canonical v2", PayloadV2(SignatureFields{
			DeviceID: "dev-1", ClientID: "openclaw-macos", ClientMode: "ui", Role: "operator",
			Scopes: []string{"operator.admin", "operator.read"}, SignedAtMs: 1_700_000_000_000, Nonce: "nonce-abc",
		}), "v2|dev-1|openclaw-macos|ui|operator|operator.admin,operator.read|1700000000000||nonce-abc"},
		{"canonical v3", PayloadV3(SignatureFields{
			DeviceID: "dev-1", ClientID: "openclaw-macos", ClientMode: "ui", Role: "operator",
			Scopes: []string{"operator.admin", "operator.read"}, SignedAtMs: 1_700_000_000_000, Token: "tok-123",
			Nonce: "nonce-abc", Platform: "  IOS  ", DeviceFamily: "  iPhone  ",
		}), "v3|dev-1|openclaw-macos|ui|operator|operator.admin,operator.read|1700000000000|tok-123|nonce-abc|ios|iphone"},
		{"v3 keeps empty metadata slots", PayloadV3(SignatureFields{
			DeviceID: "dev-2", ClientID: "openclaw-ios", ClientMode: "ui", Role: "operator",
			Scopes: []string{"operator.read"}, SignedAtMs: 1_700_000_000_001, Nonce: "nonce-def",
		}), "v3|dev-2|openclaw-ios|ui|operator|operator.read|1700000000001||nonce-def||"},
		{"no scopes", PayloadV3(SignatureFields{
			DeviceID: "dev-1", ClientID: "node-host", ClientMode: "node", Role: "node",
			SignedAtMs: 1_700_000_000_002, Token: "tok-456", Nonce: "nonce-ghi", Platform: "  macOS  ", DeviceFamily: "  Mac  ",
		}), "v3|dev-1|node-host|node|node||1700000000002|tok-456|nonce-ghi|macos|mac"},
		{"golden payload", PayloadV3(goldenFields()),
			"v3|" + goldenDeviceID + "|openclaw-macos|ui|operator|operator.admin,operator.read|1700000000000|tok-123|nonce-abc|ios|iphone"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s\ngot  %q\nwant %q", tt.name, tt.got, tt.want)
		}
	}
}

func TestNormalizeDeviceMetadata(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  İOS  ", "İos"}, // only ASCII A–Z is lowercased (device-auth.test.ts)
		{"  MAC  ", "mac"},
		{"", ""},
		{"\u00a0\ufeffiPad\u3000\u2028", "ipad"},   // JavaScript trims NBSP, BOM, ideographic space, LS
		{"\u0085Linux\u0085", "\u0085linux\u0085"}, // …but not NEL, unlike strings.TrimSpace
		{"ÄÖÜ Straße", "ÄÖÜ straße"},
	}
	for _, tt := range tests {
		if got := NormalizeDeviceMetadata(tt.in); got != tt.want {
			t.Errorf("NormalizeDeviceMetadata(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestGoldenIdentity(t *testing.T) {
	priv := goldenKey()
	pub := priv.Public().(ed25519.PublicKey)
	if got := EncodePublicKey(pub); got != goldenPublicKey {
		t.Errorf("public key %q", got)
	}
	if got := DeviceIDFromPublicKey(pub); got != goldenDeviceID {
		t.Errorf("device id %q", got)
	}
	if got := SignPayload(priv, PayloadV3(goldenFields())); got != goldenSigV3 {
		t.Errorf("v3 signature %q", got)
	}
	if got := SignPayload(priv, PayloadV2(goldenFields())); got != goldenSigV2 {
		t.Errorf("v2 signature %q", got)
	}
}

func TestParsePublicKey(t *testing.T) {
	want := goldenKey().Public().(ed25519.PublicKey)
	raw := []byte(want)
	for name, in := range map[string]string{
		"base64url unpadded": goldenPublicKey,
		"base64 padded":      base64.StdEncoding.EncodeToString(raw),
		"base64 unpadded":    base64.RawStdEncoding.EncodeToString(raw),
		"base64url padded":   base64.URLEncoding.EncodeToString(raw),
		"PEM SPKI":           goldenPublicKeyPEM,
		"PEM with padding":   "\n  " + goldenPublicKeyPEM + "\n",
	} {
		got, err := ParsePublicKey(in)
		if err != nil || !got.Equal(want) {
			t.Errorf("%s: %x, %v", name, got, err)
		}
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	for name, in := range map[string]string{
		"empty":           "",
		"31 bytes":        base64.RawURLEncoding.EncodeToString(raw[:31]),
		"33 bytes":        base64.RawURLEncoding.EncodeToString(append(raw, 0)),
		"not base64":      "!!!not-a-key!!!",
		"PEM garbage":     "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
		"PEM private key": "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEB\n-----END PRIVATE KEY-----\n",
		"PEM ECDSA":       string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER})),
		"too long":        strings.Repeat("A", MaxPublicKeyLength+1),
	} {
		if got, err := ParsePublicKey(in); err == nil {
			t.Errorf("%s: accepted %x", name, got)
		}
	}
}

func TestVerifyDeviceAccepts(t *testing.T) {
	sigStd := base64.StdEncoding.EncodeToString(mustDecode(t, goldenSigV3))
	tests := []struct {
		name  string
		proof DeviceProof
		now   time.Time
	}{
		{"v3 signature", goldenProof(goldenSigV3), goldenSignedAt},
		{"legacy v2 signature", goldenProof(goldenSigV2), goldenSignedAt},
		{"plain padded base64 signature", goldenProof(sigStd), goldenSignedAt},
		{"PEM public key", func() DeviceProof { p := goldenProof(goldenSigV3); p.PublicKey = goldenPublicKeyPEM; return p }(), goldenSignedAt},
		{"nonce with white space around it", func() DeviceProof { p := goldenProof(goldenSigV3); p.Nonce = " \t" + goldenNonce + "\n"; return p }(), goldenSignedAt},
		{"signed exactly 2 min ago", goldenProof(goldenSigV3), goldenSignedAt.Add(SignatureSkew)},
		{"signed exactly 2 min ahead", goldenProof(goldenSigV3), goldenSignedAt.Add(-SignatureSkew)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := VerifyDevice(tt.proof, goldenFields(), goldenNonce, tt.now); err != nil {
				t.Fatalf("rejected: %v", err)
			}
		})
	}
}

func mustDecode(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wrongLengthKey is 31 bytes whose sha256 is used as the device id, so the
// proof passes the id check and reaches the public-key check.
func wrongLengthKey() (key, id string) {
	raw := bytes.Repeat([]byte{7}, 31)
	sum := sha256.Sum256(raw)
	return base64.RawURLEncoding.EncodeToString(raw), hex.EncodeToString(sum[:])
}

func TestVerifyDeviceRejects(t *testing.T) {
	shortKey, shortKeyID := wrongLengthKey()
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKIXPublicKey(&ecKey.PublicKey)
	ecSum := sha256.Sum256(ecDER)
	with := func(mod func(*DeviceProof)) DeviceProof { p := goldenProof(goldenSigV3); mod(&p); return p }
	fieldsWith := func(mod func(*SignatureFields)) SignatureFields { f := goldenFields(); mod(&f); return f }
	tests := []struct {
		name   string
		proof  DeviceProof
		fields SignatureFields
		now    time.Time
		nonce  string
		reason string
	}{
		{"id of another key", with(func(p *DeviceProof) { p.ID = strings.Repeat("0", 64) }), goldenFields(), goldenSignedAt, goldenNonce, ReasonDeviceIDMismatch},
		{"uppercase id", with(func(p *DeviceProof) { p.ID = strings.ToUpper(goldenDeviceID) }), goldenFields(), goldenSignedAt, goldenNonce, ReasonDeviceIDMismatch},
		{"undecodable key", with(func(p *DeviceProof) { p.PublicKey = "%%%" }), goldenFields(), goldenSignedAt, goldenNonce, ReasonDeviceIDMismatch},
		{"id mismatch checked before staleness", with(func(p *DeviceProof) { p.ID = "x"; p.SignedAt = 0 }), goldenFields(), goldenSignedAt, goldenNonce, ReasonDeviceIDMismatch},
		{"signed too long ago", goldenProof(goldenSigV3), goldenFields(), goldenSignedAt.Add(SignatureSkew + time.Millisecond), goldenNonce, ReasonSignatureStale},
		{"signed in the future", goldenProof(goldenSigV3), goldenFields(), goldenSignedAt.Add(-SignatureSkew - time.Millisecond), goldenNonce, ReasonSignatureStale},
		{"staleness checked before nonce", with(func(p *DeviceProof) { p.Nonce = "" }), goldenFields(), goldenSignedAt.Add(time.Hour), goldenNonce, ReasonSignatureStale},
		{"blank nonce", with(func(p *DeviceProof) { p.Nonce = " \u00a0 " }), goldenFields(), goldenSignedAt, goldenNonce, ReasonNonceMissing},
		{"nonce of another socket", goldenProof(goldenSigV3), goldenFields(), goldenSignedAt, "nonce-xyz", ReasonNonceMismatch},
		{"nonce compared exactly", with(func(p *DeviceProof) { p.Nonce = "NONCE-ABC" }), goldenFields(), goldenSignedAt, goldenNonce, ReasonNonceMismatch},
		{"no challenge nonce", goldenProof(goldenSigV3), goldenFields(), goldenSignedAt, "", ReasonNonceMismatch},
		{"31-byte key", with(func(p *DeviceProof) { p.PublicKey, p.ID = shortKey, shortKeyID }), goldenFields(), goldenSignedAt, goldenNonce, ReasonPublicKey},
		{"ECDSA PEM key", with(func(p *DeviceProof) {
			p.PublicKey = string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: ecDER}))
			p.ID = hex.EncodeToString(ecSum[:])
		}), goldenFields(), goldenSignedAt, goldenNonce, ReasonPublicKey},
		{"scopes differ from the signed ones", goldenProof(goldenSigV3), fieldsWith(func(f *SignatureFields) { f.Scopes = []string{"operator.admin"} }), goldenSignedAt, goldenNonce, ReasonSignature},
		{"token differs", goldenProof(goldenSigV3), fieldsWith(func(f *SignatureFields) { f.Token = "" }), goldenSignedAt, goldenNonce, ReasonSignature},
		{"platform differs", goldenProof(goldenSigV3), fieldsWith(func(f *SignatureFields) { f.Platform = "android" }), goldenSignedAt, goldenNonce, ReasonSignature},
		{"role differs", goldenProof(goldenSigV2), fieldsWith(func(f *SignatureFields) { f.Role = "node" }), goldenSignedAt, goldenNonce, ReasonSignature},
		{"signedAt differs from the signed one", with(func(p *DeviceProof) { p.SignedAt++ }), goldenFields(), goldenSignedAt, goldenNonce, ReasonSignature},
		{"garbage signature", with(func(p *DeviceProof) { p.Signature = "not base64!" }), goldenFields(), goldenSignedAt, goldenNonce, ReasonSignature},
		{"truncated signature", with(func(p *DeviceProof) { p.Signature = goldenSigV3[:80] }), goldenFields(), goldenSignedAt, goldenNonce, ReasonSignature},
		{"over-long signature", with(func(p *DeviceProof) { p.Signature = goldenSigV3 + strings.Repeat("=", MaxSignatureLength) }), goldenFields(), goldenSignedAt, goldenNonce, ReasonSignature},
		{"flipped bit", with(func(p *DeviceProof) {
			sig := mustDecode(t, goldenSigV3)
			sig[10] ^= 1
			p.Signature = base64.RawURLEncoding.EncodeToString(sig)
		}), goldenFields(), goldenSignedAt, goldenNonce, ReasonSignature},
	}
	codes := map[string]string{
		ReasonDeviceIDMismatch: protocol.DetailDeviceAuthDeviceIDMismatch,
		ReasonSignatureStale:   protocol.DetailDeviceAuthSignatureExpired,
		ReasonNonceMissing:     protocol.DetailDeviceAuthNonceRequired,
		ReasonNonceMismatch:    protocol.DetailDeviceAuthNonceMismatch,
		ReasonSignature:        protocol.DetailDeviceAuthSignatureInvalid,
		ReasonPublicKey:        protocol.DetailDeviceAuthPublicKeyInvalid,
	}
	messages := map[string]string{
		ReasonDeviceIDMismatch: "device identity mismatch",
		ReasonSignatureStale:   "device signature expired",
		ReasonNonceMissing:     "device nonce required",
		ReasonNonceMismatch:    "device nonce mismatch",
		ReasonSignature:        "device signature invalid",
		ReasonPublicKey:        "device public key invalid",
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyDevice(tt.proof, tt.fields, tt.nonce, tt.now)
			var de *DeviceError
			if !errors.As(err, &de) {
				t.Fatalf("error = %v, want *DeviceError", err)
			}
			if de.Reason != tt.reason || de.Code != codes[tt.reason] || de.Message != messages[tt.reason] {
				t.Errorf("got %+v, want reason %s", de, tt.reason)
			}
		})
	}
}

func TestDeviceErrorShape(t *testing.T) {
	err := VerifyDevice(goldenProof(goldenSigV3), goldenFields(), "other", goldenSignedAt)
	var de *DeviceError
	if !errors.As(err, &de) {
		t.Fatal(err)
	}
	got, _ := json.Marshal(de.ErrorShape())
	want := `{"code":"INVALID_REQUEST","message":"device nonce mismatch","details":{"code":"DEVICE_AUTH_NONCE_MISMATCH","reason":"device-nonce-mismatch"}}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	de.Message = "changed"
	if again := VerifyDevice(goldenProof(goldenSigV3), goldenFields(), "other", goldenSignedAt); again.Error() != "device nonce mismatch" {
		t.Error("DeviceError values are shared between calls")
	}
	if newDeviceError("bogus").Code != protocol.DetailDeviceAuthInvalid {
		t.Error("unknown reason")
	}
}

func TestSignatureToken(t *testing.T) {
	tests := []struct {
		auth *protocol.ConnectAuth
		want string
	}{
		{nil, ""},
		{&protocol.ConnectAuth{}, ""},
		{&protocol.ConnectAuth{Token: "t", DeviceToken: "d", BootstrapToken: "b"}, "t"},
		{&protocol.ConnectAuth{DeviceToken: "d", BootstrapToken: "b"}, "d"},
		{&protocol.ConnectAuth{BootstrapToken: "b", Password: "p"}, "b"},
		{&protocol.ConnectAuth{Password: "p"}, ""},
	}
	for _, tt := range tests {
		if got := SignatureToken(tt.auth); got != tt.want {
			t.Errorf("SignatureToken(%+v) = %q, want %q", tt.auth, got, tt.want)
		}
	}
}

// A connect frame as an OpenClaw client builds it verifies end to end.
func TestFromConnectEndToEnd(t *testing.T) {
	frame := `{"minProtocol":3,"maxProtocol":3,"client":{"id":"openclaw-macos","version":"2026.4.12","platform":"  IOS  ","deviceFamily":"  iPhone  ","mode":"ui"},` +
		`"scopes":["operator.admin","operator.read"],"auth":{"token":"tok-123"},` +
		`"device":{"id":"` + goldenDeviceID + `","publicKey":"` + goldenPublicKey + `","signature":"` + goldenSigV3 + `","signedAt":1700000000000,"nonce":"nonce-abc"}}`
	p, _, rej := protocol.CheckConnect(json.RawMessage(frame))
	if rej != nil {
		t.Fatal(rej.Error)
	}
	proof, fields, ok := FromConnect(p)
	if !ok {
		t.Fatal("no device")
	}
	if err := VerifyDevice(proof, fields, goldenNonce, goldenSignedAt.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	p.Device = nil
	if _, _, ok := FromConnect(p); ok {
		t.Error("FromConnect without a device")
	}
}
