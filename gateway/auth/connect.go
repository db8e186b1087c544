package auth

import (
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// Reasons a connect failed authentication: OpenClaw's GatewayAuthResult
// reasons, sent as details.authReason.
const (
	// FailTokenMissing: token mode, and the client sent no token.
	FailTokenMissing = "token_missing"
	// FailTokenMismatch: the token was wrong.
	FailTokenMismatch = "token_mismatch"
	// FailTokenNotConfigured: token mode, but the gateway has no token.
	FailTokenNotConfigured = "token_missing_config"
	// FailPasswordMissing: password mode, and the client sent no password.
	FailPasswordMissing = "password_missing"
	// FailPasswordMismatch: the password was wrong.
	FailPasswordMismatch = "password_mismatch"
	// FailPasswordNotConfigured: password mode, but the gateway has none.
	FailPasswordNotConfigured = "password_missing_config"
	// FailRateLimited: too many failures from this address; see RateLimiter.
	FailRateLimited = "rate_limited"
	// FailDeviceTokenMismatch: a device token was presented and rejected.
	FailDeviceTokenMismatch = "device_token_mismatch"
	// FailBootstrapTokenInvalid: a pairing bootstrap token was rejected.
	FailBootstrapTokenInvalid = "bootstrap_token_invalid"
	// FailUnsupportedMode: CheckSharedSecret got a mode it cannot decide
	// (Switchboard's own reason; reported as AUTH_UNAUTHORIZED).
	FailUnsupportedMode = "unsupported_auth_mode"
)

// Gateway auth modes.
const (
	// ModeNone accepts every connect.
	ModeNone = "none"
	// ModeToken requires the shared token.
	ModeToken = "token"
	// ModePassword requires the shared password.
	ModePassword = "password"
	// ModeTrustedProxy takes identity from a trusted proxy's headers.
	ModeTrustedProxy = "trusted-proxy"
)

// ConnectFailure describes a rejected connect, for the error a client
// receives.
type ConnectFailure struct {
	// Reason is one of the Fail* reasons; "" reports AUTH_REQUIRED.
	Reason string
	// Mode is the gateway's auth mode (ModeToken, ModePassword, …).
	Mode string
	// Client is the connecting client, which selects the hint in the
	// message (CLI, browser UI, or anything else).
	Client protocol.ClientInfo
	// Auth is what the client sent, or nil.
	Auth *protocol.ConnectAuth
	// HasDevice reports whether the client presented a device identity.
	HasDevice bool
	// RetryAfter is the remaining lockout for FailRateLimited.
	RetryAfter time.Duration
}

// ConnectDetails is the details object of a failed connect (openclaw-facts
// §1.4 step 6).
type ConnectDetails struct {
	// Code is an AUTH_* code.
	Code string `json:"code"`
	// AuthReason is the failure reason, left out when unknown.
	AuthReason string `json:"authReason,omitempty"`
	// CanRetryWithDeviceToken tells a client with a cached device token to
	// retry once with it.
	CanRetryWithDeviceToken bool `json:"canRetryWithDeviceToken"`
	// RecommendedNextStep is one of the protocol.Next* values.
	RecommendedNextStep string `json:"recommendedNextStep"`
}

// authProvided is what kind of credential a client sent, as OpenClaw
// classifies it (password first, then token, bootstrap token, device
// token).
func authProvided(a *protocol.ConnectAuth) string {
	switch {
	case a == nil:
		return "none"
	case a.Password != "":
		return "password"
	case a.Token != "":
		return "token"
	case a.BootstrapToken != "":
		return "bootstrap-token"
	case a.DeviceToken != "":
		return "device-token"
	}
	return "none"
}

// ConnectErrorDetails builds the details of a failed connect: the AUTH_*
// code for the reason, and OpenClaw's recovery advice. A client that sent a
// shared token with a device identity and no device token gets
// canRetryWithDeviceToken on a token mismatch, so it can retry once with
// its cached device token.
func ConnectErrorDetails(f ConnectFailure) ConnectDetails {
	d := ConnectDetails{Code: detailCode(f.Reason), AuthReason: f.Reason}
	if f.Reason == FailTokenMismatch && f.HasDevice && authProvided(f.Auth) == "token" &&
		(f.Auth == nil || f.Auth.DeviceToken == "") {
		d.CanRetryWithDeviceToken = true
		d.RecommendedNextStep = protocol.NextRetryWithDeviceToken
		return d
	}
	switch f.Reason {
	case FailTokenMissing, FailTokenNotConfigured, FailPasswordMissing, FailPasswordNotConfigured:
		d.RecommendedNextStep = protocol.NextUpdateAuthConfiguration
	case FailTokenMismatch, FailPasswordMismatch, FailDeviceTokenMismatch:
		d.RecommendedNextStep = protocol.NextUpdateAuthCredentials
	case FailRateLimited:
		d.RecommendedNextStep = protocol.NextWaitThenRetry
	default:
		d.RecommendedNextStep = protocol.NextReviewAuthConfiguration
	}
	return d
}

// detailCode maps a failure reason to its details.code
// (resolveAuthConnectErrorDetailCode).
func detailCode(reason string) string {
	switch reason {
	case FailTokenMissing:
		return protocol.DetailAuthTokenMissing
	case FailTokenMismatch:
		return protocol.DetailAuthTokenMismatch
	case FailTokenNotConfigured:
		return protocol.DetailAuthTokenNotConfigured
	case FailPasswordMissing:
		return protocol.DetailAuthPasswordMissing
	case FailPasswordMismatch:
		return protocol.DetailAuthPasswordMismatch
	case FailPasswordNotConfigured:
		return protocol.DetailAuthPasswordNotConfigured
	case FailBootstrapTokenInvalid:
		return protocol.DetailAuthBootstrapTokenInvalid
	case FailRateLimited:
		return protocol.DetailAuthRateLimited
	case FailDeviceTokenMismatch:
		return protocol.DetailAuthDeviceTokenMismatch
	case "":
		return protocol.DetailAuthRequired
	}
	return protocol.DetailAuthUnauthorized
}

// ConnectFailureMessage is the human-readable message for a failed
// connect, in Switchboard's words (issue 26, finding 8): what was wrong,
// and where the right credential comes from, worded for the client: a
// browser is told to paste the token, a command-line client which
// configuration it reads. It never holds a credential. OpenClaw's clients
// decide from ConnectErrorDetails, not from this text.
func ConnectFailureMessage(f ConnectFailure) string {
	isCLI := f.Client.Mode == protocol.ModeCLI
	isUI := f.Client.ID == protocol.ClientControlUI || f.Client.ID == protocol.ClientWebchatUI ||
		f.Client.Mode == protocol.ModeWebchat
	const where = `"switchboard gateway token" prints it on the gateway's machine`
	tokenHint := "send the gateway's token; " + where
	passwordHint := "send the password set in gateway.auth.password of the gateway's configuration"
	switch {
	case isCLI:
		tokenHint = where + "; run this command with the daemon's --config, so that both read the same token"
		passwordHint = "run this command with the daemon's --config, so that both read the same gateway.auth.password"
	case isUI:
		tokenHint = "paste the token; " + where
		passwordHint = "enter the password set in gateway.auth.password of the gateway's configuration"
	}
	switch f.Reason {
	case FailTokenMissing:
		return "unauthorized: no gateway token was given: " + tokenHint
	case FailTokenMismatch:
		return "unauthorized: wrong gateway token: " + tokenHint
	case FailTokenNotConfigured:
		return "unauthorized: the gateway has no token to check against: set gateway.auth.token in its configuration"
	case FailPasswordMissing:
		return "unauthorized: no gateway password was given: " + passwordHint
	case FailPasswordMismatch:
		return "unauthorized: wrong gateway password: " + passwordHint
	case FailPasswordNotConfigured:
		return "unauthorized: the gateway has no password to check against: set gateway.auth.password in its configuration"
	case FailRateLimited:
		return "unauthorized: too many failed attempts from this address: wait, then try again with the right credential"
	case FailDeviceTokenMismatch:
		return "unauthorized: this device's token is not valid here (revoked, or from another gateway): connect with the gateway token to get a new one; " + where
	}
	provided := authProvided(f.Auth)
	switch {
	case f.Mode == ModeToken && provided == "none":
		return "unauthorized: no gateway token was given: " + tokenHint
	case f.Mode == ModeToken && provided == "device-token":
		return "unauthorized: this device's token was refused: connect with the gateway token to pair it again; " + where
	case f.Mode == ModePassword && provided == "none":
		return "unauthorized: no gateway password was given: " + passwordHint
	}
	return "unauthorized"
}

// ConnectFailureError is the complete error of a rejected connect:
// INVALID_REQUEST with ConnectFailureMessage and ConnectErrorDetails; a
// rate-limited failure is also marked retryable with retryAfterMs. Close
// the socket afterwards with protocol.ClosePolicyViolation and
// protocol.TruncateCloseReason(message).
func ConnectFailureError(f ConnectFailure) *protocol.ErrorShape {
	e := protocol.InvalidRequest(ConnectFailureMessage(f), ConnectErrorDetails(f))
	if f.Reason == FailRateLimited && f.RetryAfter > 0 {
		ms := max(f.RetryAfter.Milliseconds(), 1)
		e.Retryable = true
		e.RetryAfterMs = &ms
	}
	return e
}

// CheckSharedSecret decides shared-secret auth for mode, returning "" when
// the presented credential matches the configured one (compared with
// Equal) and the Fail* reason otherwise. ModeNone always passes. Any other
// mode, including ModeTrustedProxy (decided from proxy headers, not here),
// fails closed with FailUnsupportedMode.
func CheckSharedSecret(mode, configured string, presented *protocol.ConnectAuth) string {
	var got string
	switch mode {
	case ModeNone:
		return ""
	case ModeToken:
		if configured == "" {
			return FailTokenNotConfigured
		}
		if presented != nil {
			got = presented.Token
		}
		if got == "" {
			return FailTokenMissing
		}
		if !Equal(got, configured) {
			return FailTokenMismatch
		}
		return ""
	case ModePassword:
		if configured == "" {
			return FailPasswordNotConfigured
		}
		if presented != nil {
			got = presented.Password
		}
		if got == "" {
			return FailPasswordMissing
		}
		if !Equal(got, configured) {
			return FailPasswordMismatch
		}
		return ""
	}
	return FailUnsupportedMode
}
