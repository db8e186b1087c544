package auth

import (
	"crypto/ed25519"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// FuzzVerifyDevice checks VerifyDevice never panics and never accepts a
// proof that the standard library's ed25519.Verify rejects for both
// payload versions, with the signature decoded independently.
func FuzzVerifyDevice(f *testing.F) {
	f.Add(goldenSigV3, uint8(0), goldenDeviceID, "operator.admin,operator.read", "tok-123", goldenNonce, "  IOS  ", int64(0), goldenNonce)
	f.Add(goldenSigV2, uint8(1), goldenDeviceID, "operator.admin,operator.read", "tok-123", " nonce-abc ", "x", int64(119_999), goldenNonce)
	f.Add(goldenSigV3+"==", uint8(2), goldenDeviceID, "", "", "n", "", int64(-5), "n")
	f.Add("AAAA", uint8(3), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "a", "b", "c", "d", int64(1), "c")
	f.Fuzz(func(t *testing.T, sig string, keyChoice uint8, id, scopes, token, nonce, platform string, offsetMs int64, challenge string) {
		proof := DeviceProof{ID: id, Signature: sig, SignedAt: goldenSignedAt.UnixMilli(), Nonce: nonce}
		switch keyChoice % 4 {
		case 0:
			proof.PublicKey = goldenPublicKey
		case 1:
			proof.PublicKey = goldenPublicKeyPEM
		case 2:
			proof.PublicKey = base64.StdEncoding.EncodeToString(goldenKey().Public().(ed25519.PublicKey))
		default:
			proof.PublicKey = id // attacker-chosen garbage
		}
		fields := goldenFields()
		fields.Scopes = strings.Split(scopes, ",")
		fields.Token = token
		fields.Platform = platform
		now := goldenSignedAt.Add(time.Duration(offsetMs) * time.Millisecond)

		if VerifyDevice(proof, fields, challenge, now) != nil {
			return
		}
		// Accepted: check every condition independently.
		pub, err := ParsePublicKey(proof.PublicKey)
		if err != nil {
			t.Fatalf("accepted an unparsable key %q", proof.PublicKey)
		}
		if DeviceIDFromPublicKey(pub) != proof.ID {
			t.Fatalf("accepted id %q for key %q", proof.ID, proof.PublicKey)
		}
		if trimJS(proof.Nonce) != challenge || challenge == "" {
			t.Fatalf("accepted nonce %q for challenge %q", proof.Nonce, challenge)
		}
		if d := now.Sub(time.UnixMilli(proof.SignedAt)); d > SignatureSkew || d < -SignatureSkew {
			t.Fatalf("accepted a signature %v old", d)
		}
		fields.DeviceID, fields.SignedAtMs, fields.Nonce = proof.ID, proof.SignedAt, challenge
		raw, ok := stdDecode(proof.Signature)
		if !ok {
			t.Fatalf("accepted signature %q that no standard encoding decodes", proof.Signature)
		}
		if !ed25519.Verify(pub, []byte(PayloadV3(fields)), raw) && !ed25519.Verify(pub, []byte(PayloadV2(fields)), raw) {
			t.Fatalf("accepted signature %q that ed25519.Verify rejects", proof.Signature)
		}
	})
}

// stdDecode decodes with the standard library's unpadded base64 decoder,
// after mapping the URL alphabet to the standard one and dropping padding
// (OpenClaw's decoder, Node's Buffer, accepts both).
func stdDecode(s string) ([]byte, bool) {
	s = strings.NewReplacer("-", "+", "_", "/").Replace(strings.TrimRight(s, "="))
	b, err := base64.RawStdEncoding.DecodeString(s)
	return b, err == nil
}
