package auth

import (
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// SignatureSkew is how far device.signedAt may be from the server's clock
// (DEVICE_SIGNATURE_SKEW_MS).
const SignatureSkew = 2 * time.Minute

// Bounds on the device proof's strings, from OpenClaw's handshake schema:
// generous for every valid Ed25519 encoding (PEM is about 120 characters,
// base64url 43; a base64url signature is 86), small enough that a pre-auth
// client cannot make the server parse large keys.
const (
	// MaxPublicKeyLength caps device.publicKey.
	MaxPublicKeyLength = 1024
	// MaxSignatureLength caps device.signature.
	MaxSignatureLength = 256
)

// Values of details.reason for a failed device proof (openclaw-facts §1.4
// step 8).
const (
	// ReasonDeviceIDMismatch: device.id is not the public key's sha256 hex.
	ReasonDeviceIDMismatch = "device-id-mismatch"
	// ReasonSignatureStale: signedAt is more than SignatureSkew from now.
	ReasonSignatureStale = "device-signature-stale"
	// ReasonNonceMissing: device.nonce is blank.
	ReasonNonceMissing = "device-nonce-missing"
	// ReasonNonceMismatch: device.nonce is not the challenge nonce.
	ReasonNonceMismatch = "device-nonce-mismatch"
	// ReasonSignature: the signature verifies as neither v3 nor v2.
	ReasonSignature = "device-signature"
	// ReasonPublicKey: the public key is not a usable Ed25519 key.
	ReasonPublicKey = "device-public-key"
)

// DeviceError is a failed device proof. Send it as ErrorShape() and close
// the socket with protocol.ClosePolicyViolation and Message as the reason.
type DeviceError struct {
	// Message is the fixed human-readable message, e.g. "device nonce
	// mismatch".
	Message string
	// Reason is the fixed details.reason, e.g. ReasonNonceMismatch.
	Reason string
	// Code is the details.code, e.g. protocol.DetailDeviceAuthNonceMismatch.
	Code string
}

// Error returns Message.
func (e *DeviceError) Error() string { return e.Message }

// DeviceErrorDetails is the details object of a failed device proof.
type DeviceErrorDetails struct {
	// Code is a DEVICE_AUTH_* code.
	Code string `json:"code"`
	// Reason is a device-* reason.
	Reason string `json:"reason"`
}

// ErrorShape is the INVALID_REQUEST error OpenClaw sends for e, with
// details {code, reason}.
func (e *DeviceError) ErrorShape() *protocol.ErrorShape {
	return protocol.InvalidRequest(e.Message, DeviceErrorDetails{Code: e.Code, Reason: e.Reason})
}

// newDeviceError returns a fresh *DeviceError for a reason, so callers may
// keep or change it without affecting others.
func newDeviceError(reason string) *DeviceError {
	switch reason {
	case ReasonDeviceIDMismatch:
		return &DeviceError{"device identity mismatch", reason, protocol.DetailDeviceAuthDeviceIDMismatch}
	case ReasonSignatureStale:
		return &DeviceError{"device signature expired", reason, protocol.DetailDeviceAuthSignatureExpired}
	case ReasonNonceMissing:
		return &DeviceError{"device nonce required", reason, protocol.DetailDeviceAuthNonceRequired}
	case ReasonNonceMismatch:
		return &DeviceError{"device nonce mismatch", reason, protocol.DetailDeviceAuthNonceMismatch}
	case ReasonSignature:
		return &DeviceError{"device signature invalid", reason, protocol.DetailDeviceAuthSignatureInvalid}
	case ReasonPublicKey:
		return &DeviceError{"device public key invalid", reason, protocol.DetailDeviceAuthPublicKeyInvalid}
	}
	return &DeviceError{"device auth invalid", reason, protocol.DetailDeviceAuthInvalid}
}

var (
	errKeyNotEd25519  = errors.New("auth: public key is not Ed25519")
	errKeyLength      = errors.New("auth: public key is not 32 bytes")
	errKeyTooLong     = errors.New("auth: public key is too long")
	errKeyNotPEMBlock = errors.New("auth: PEM public key has no PUBLIC KEY block")
)

// DeviceIDFromPublicKey returns a device's id: the lowercase sha256 hex of
// its raw 32-byte public key.
func DeviceIDFromPublicKey(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:])
}

// EncodePublicKey returns the wire form of a public key: raw bytes in
// unpadded base64url.
func EncodePublicKey(pub ed25519.PublicKey) string {
	return base64.RawURLEncoding.EncodeToString(pub)
}

// ParsePublicKey parses a device public key: the raw 32 bytes in base64url
// or plain base64, padded or not, or a PEM "PUBLIC KEY" (SPKI) block
// holding an Ed25519 key.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	if len(s) > MaxPublicKeyLength {
		return nil, errKeyTooLong
	}
	if strings.Contains(s, "BEGIN") {
		key, _, err := parsePEMKey(s)
		return key, err
	}
	raw, err := decodeBase64(s)
	if err != nil {
		return nil, err
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, errKeyLength
	}
	return ed25519.PublicKey(raw), nil
}

// parsePEMKey returns the Ed25519 key in a PEM SPKI block, or, for a
// well-formed SPKI of another algorithm, the DER bytes that OpenClaw hashes
// into the device id.
func parsePEMKey(s string) (ed25519.PublicKey, []byte, error) {
	block, _ := pem.Decode([]byte(strings.TrimSpace(s)))
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, nil, errKeyNotPEMBlock
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, nil, err
	}
	pub, ok := key.(ed25519.PublicKey)
	if !ok {
		return nil, block.Bytes, errKeyNotEd25519
	}
	return pub, nil, nil
}

// deviceIDFromWire derives the id OpenClaw computes for a publicKey string
// (deriveDeviceIdFromPublicKey): sha256 over the decoded bytes, whatever
// their length, so a key that hashes right but is unusable reaches the
// public-key check instead of reading as an id mismatch.
func deviceIDFromWire(s string) (string, bool) {
	var raw []byte
	if strings.Contains(s, "BEGIN") {
		pub, der, err := parsePEMKey(s)
		switch {
		case err == nil:
			raw = pub
		case der != nil:
			raw = der
		default:
			return "", false
		}
	} else {
		var err error
		if raw, err = decodeBase64(s); err != nil {
			return "", false
		}
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:]), true
}

// decodeBase64 accepts base64url and standard base64, padded or not.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimRight(s, "=")
	s = strings.NewReplacer("-", "+", "_", "/").Replace(s)
	return base64.RawStdEncoding.DecodeString(s)
}

// SignatureFields are the values a device signs (openclaw-facts §1.6).
type SignatureFields struct {
	// DeviceID is device.id.
	DeviceID string
	// ClientID is client.id.
	ClientID string
	// ClientMode is client.mode.
	ClientMode string
	// Role is the resolved role (operator when the client sent none).
	Role string
	// Scopes are the requested scopes, in the client's order.
	Scopes []string
	// SignedAtMs is device.signedAt.
	SignedAtMs int64
	// Token is the signed credential; see SignatureToken.
	Token string
	// Nonce is the challenge nonce.
	Nonce string
	// Platform is client.platform (v3 only; normalized when signed).
	Platform string
	// DeviceFamily is client.deviceFamily (v3 only; normalized when signed).
	DeviceFamily string
}

// SignatureToken returns the credential bound into a device signature: the
// first non-empty of auth.token, auth.deviceToken and auth.bootstrapToken,
// or "".
func SignatureToken(a *protocol.ConnectAuth) string {
	if a == nil {
		return ""
	}
	for _, t := range []string{a.Token, a.DeviceToken, a.BootstrapToken} {
		if t != "" {
			return t
		}
	}
	return ""
}

// DeviceProof is the device identity a client presents in connect.
type DeviceProof struct {
	// ID is device.id.
	ID string
	// PublicKey is device.publicKey as sent.
	PublicKey string
	// Signature is device.signature as sent.
	Signature string
	// SignedAt is device.signedAt in epoch milliseconds.
	SignedAt int64
	// Nonce is device.nonce as sent.
	Nonce string
}

// FromConnect extracts the device proof and the signed fields from
// validated connect params; ok is false when the client sent no device. The
// role and scopes are the params' resolved ones.
func FromConnect(p protocol.ConnectParams) (DeviceProof, SignatureFields, bool) {
	if p.Device == nil {
		return DeviceProof{}, SignatureFields{}, false
	}
	d := DeviceProof{ID: p.Device.ID, PublicKey: p.Device.PublicKey, Signature: p.Device.Signature,
		SignedAt: p.Device.SignedAt, Nonce: p.Device.Nonce}
	f := SignatureFields{
		DeviceID: d.ID, ClientID: p.Client.ID, ClientMode: p.Client.Mode, Role: p.Role, Scopes: p.Scopes,
		SignedAtMs: d.SignedAt, Token: SignatureToken(p.Auth), Nonce: trimJS(d.Nonce),
		Platform: p.Client.Platform, DeviceFamily: p.Client.DeviceFamily,
	}
	return d, f, true
}

// PayloadV3 builds the v3 signed payload:
//
//	v3|deviceId|clientId|clientMode|role|scopes|signedAtMs|token|nonce|platform|deviceFamily
//
// with scopes joined by "," and platform and deviceFamily normalized by
// NormalizeDeviceMetadata.
func PayloadV3(p SignatureFields) string {
	return strings.Join([]string{
		"v3", p.DeviceID, p.ClientID, p.ClientMode, p.Role, strings.Join(p.Scopes, ","),
		strconv.FormatInt(p.SignedAtMs, 10), p.Token, p.Nonce,
		NormalizeDeviceMetadata(p.Platform), NormalizeDeviceMetadata(p.DeviceFamily),
	}, "|")
}

// PayloadV2 builds the legacy v2 signed payload, v3 without platform and
// deviceFamily:
//
//	v2|deviceId|clientId|clientMode|role|scopes|signedAtMs|token|nonce
func PayloadV2(p SignatureFields) string {
	return strings.Join([]string{
		"v2", p.DeviceID, p.ClientID, p.ClientMode, p.Role, strings.Join(p.Scopes, ","),
		strconv.FormatInt(p.SignedAtMs, 10), p.Token, p.Nonce,
	}, "|")
}

// NormalizeDeviceMetadata normalizes platform and deviceFamily for the v3
// payload: trimmed like JavaScript's trim, with only ASCII A–Z lowercased,
// so every client runtime (TypeScript, Swift, Kotlin) computes the same
// bytes ("  İOS  " becomes "İos").
func NormalizeDeviceMetadata(s string) string {
	s = trimJS(s)
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + ('a' - 'A')
		}
	}
	return string(b)
}

// trimJS trims what JavaScript's String.prototype.trim trims.
func trimJS(s string) string {
	return strings.TrimFunc(s, func(r rune) bool {
		switch r {
		case '\t', '\n', '\v', '\f', '\r', 0xFEFF, 0x2028, 0x2029:
			return true
		}
		return unicode.Is(unicode.Zs, r)
	})
}

// VerifyDevice checks a device proof against the connection's challenge
// nonce, in OpenClaw's order (openclaw-facts §1.4 step 8), and returns the
// first failure as a *DeviceError:
//
//  1. device.id must be the sha256 hex of the public key
//     (device-id-mismatch; also when the key cannot be decoded at all);
//  2. signedAt must be within SignatureSkew of now (device-signature-stale);
//  3. the nonce, trimmed, must be non-empty (device-nonce-missing)
//  4. and equal challengeNonce (device-nonce-mismatch);
//  5. the public key must be a usable Ed25519 key (device-public-key);
//  6. the signature must verify over PayloadV3, else over PayloadV2
//     (device-signature).
//
// The payload's DeviceID, SignedAtMs and Nonce are taken from d, not
// fields. OpenClaw checks the key after the signature, but its verifier
// reports an unusable key as a bad signature, which leaves
// device-public-key unreachable; Switchboard reports the precise reason.
func VerifyDevice(d DeviceProof, fields SignatureFields, challengeNonce string, now time.Time) error {
	if id, ok := deviceIDFromWire(d.PublicKey); !ok || id != d.ID {
		return newDeviceError(ReasonDeviceIDMismatch)
	}
	nowMs := now.UnixMilli()
	skew := SignatureSkew.Milliseconds()
	if d.SignedAt > nowMs+skew || d.SignedAt < nowMs-skew {
		return newDeviceError(ReasonSignatureStale)
	}
	nonce := trimJS(d.Nonce)
	if nonce == "" {
		return newDeviceError(ReasonNonceMissing)
	}
	if nonce != challengeNonce {
		return newDeviceError(ReasonNonceMismatch)
	}
	pub, err := ParsePublicKey(d.PublicKey)
	if err != nil {
		return newDeviceError(ReasonPublicKey)
	}
	fields.DeviceID, fields.SignedAtMs, fields.Nonce = d.ID, d.SignedAt, nonce
	if !verifySignature(pub, PayloadV3(fields), d.Signature) &&
		!verifySignature(pub, PayloadV2(fields), d.Signature) {
		return newDeviceError(ReasonSignature)
	}
	return nil
}

// verifySignature checks an Ed25519 signature given in base64url or
// base64.
func verifySignature(pub ed25519.PublicKey, payload, signature string) bool {
	if len(signature) > MaxSignatureLength {
		return false
	}
	sig, err := decodeBase64(signature)
	if err != nil || len(sig) != ed25519.SignatureSize {
		return false
	}
	return ed25519.Verify(pub, []byte(payload), sig)
}

// SignPayload signs a payload for tests and Go clients, returning the
// signature in unpadded base64url as OpenClaw's clients send it.
func SignPayload(priv ed25519.PrivateKey, payload string) string {
	return base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(payload)))
}
