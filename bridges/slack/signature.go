package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxSignatureAge is how far a request's timestamp may be from now before
// it is refused as a possible replay (Slack's recommendation).
const MaxSignatureAge = 300 * time.Second

// Errors of VerifySignature; the HTTP handler answers 401 for each.
var (
	ErrNoSignature    = errors.New("slack: request is not signed (X-Slack-Signature and X-Slack-Request-Timestamp are required)")
	ErrStaleSignature = errors.New("slack: request timestamp is more than 5 minutes away (a replay, or this machine's clock is wrong)")
	ErrBadSignature   = errors.New("slack: request signature does not match the signing secret")
)

// VerifySignature checks Slack's v0 request signature: X-Slack-Signature
// must be "v0=" + hex(HMAC-SHA256(secret, "v0:<timestamp>:<raw body>")),
// compared in constant time, and X-Slack-Request-Timestamp must be within
// MaxSignatureAge of now.
func VerifySignature(h http.Header, body []byte, secret string, now time.Time) error {
	sig, ts := h.Get("X-Slack-Signature"), h.Get("X-Slack-Request-Timestamp")
	if sig == "" || ts == "" || secret == "" {
		return ErrNoSignature
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w (timestamp %q is not a number)", ErrBadSignature, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > MaxSignatureAge || d < -MaxSignatureAge {
		return ErrStaleSignature
	}
	got, ok := strings.CutPrefix(sig, "v0=")
	if !ok {
		return ErrBadSignature
	}
	gotRaw, err := hex.DecodeString(got)
	if err != nil {
		return ErrBadSignature
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	if !hmac.Equal(gotRaw, mac.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}

// Sign returns the X-Slack-Signature value for body at ts (Unix seconds),
// for tests and tools that post to a Slack receiver.
func Sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}
