package protocol

import "strconv"

// Error codes of ErrorShape.Code (openclaw-facts §1.10,
// src/gateway/protocol/schema/error-codes.ts).
const (
	// CodeNotLinked means the client has not completed account linking.
	CodeNotLinked = "NOT_LINKED"
	// CodeNotPaired means the device needs pairing approval (or sent no
	// device identity at all).
	CodeNotPaired = "NOT_PAIRED"
	// CodeAgentTimeout means an agent turn exceeded its wait window.
	CodeAgentTimeout = "AGENT_TIMEOUT"
	// CodeInvalidRequest covers invalid frames and params, failed
	// authentication, and (in v3) missing scopes.
	CodeInvalidRequest = "INVALID_REQUEST"
	// CodeApprovalNotFound means an approval id is unknown or expired.
	CodeApprovalNotFound = "APPROVAL_NOT_FOUND"
	// CodeUnavailable means the gateway or a backend is temporarily
	// unavailable; such errors are usually retryable.
	CodeUnavailable = "UNAVAILABLE"
	// CodeForbidden is v4's code for an authenticated caller missing a
	// scope; v3 reports the same condition as CodeInvalidRequest.
	CodeForbidden = "FORBIDDEN"
)

// Values of details.code on a failed connect (openclaw-facts §1.10,
// src/gateway/protocol/connect-error-details.ts).
const (
	// DetailAuthRequired means auth failed without a specific reason.
	DetailAuthRequired = "AUTH_REQUIRED"
	// DetailAuthUnauthorized means auth failed for an unlisted reason.
	DetailAuthUnauthorized = "AUTH_UNAUTHORIZED"
	// DetailAuthTokenMissing means the gateway wants a token and none came.
	DetailAuthTokenMissing = "AUTH_TOKEN_MISSING"
	// DetailAuthTokenMismatch means the token was wrong.
	DetailAuthTokenMismatch = "AUTH_TOKEN_MISMATCH"
	// DetailAuthTokenNotConfigured means token mode has no token configured.
	DetailAuthTokenNotConfigured = "AUTH_TOKEN_NOT_CONFIGURED"
	// DetailAuthPasswordMissing means the gateway wants a password and none came.
	DetailAuthPasswordMissing = "AUTH_PASSWORD_MISSING"
	// DetailAuthPasswordMismatch means the password was wrong.
	DetailAuthPasswordMismatch = "AUTH_PASSWORD_MISMATCH"
	// DetailAuthPasswordNotConfigured means password mode has no password configured.
	DetailAuthPasswordNotConfigured = "AUTH_PASSWORD_NOT_CONFIGURED"
	// DetailAuthBootstrapTokenInvalid means a pairing bootstrap token was rejected.
	DetailAuthBootstrapTokenInvalid = "AUTH_BOOTSTRAP_TOKEN_INVALID"
	// DetailAuthDeviceTokenMismatch means a device token was rejected.
	DetailAuthDeviceTokenMismatch = "AUTH_DEVICE_TOKEN_MISMATCH"
	// DetailAuthRateLimited means too many failed attempts from this address.
	DetailAuthRateLimited = "AUTH_RATE_LIMITED"
	// DetailAuthTailscaleIdentityMissing is a Tailscale-mode failure.
	DetailAuthTailscaleIdentityMissing = "AUTH_TAILSCALE_IDENTITY_MISSING"
	// DetailAuthTailscaleProxyMissing is a Tailscale-mode failure.
	DetailAuthTailscaleProxyMissing = "AUTH_TAILSCALE_PROXY_MISSING"
	// DetailAuthTailscaleWhoisFailed is a Tailscale-mode failure.
	DetailAuthTailscaleWhoisFailed = "AUTH_TAILSCALE_WHOIS_FAILED"
	// DetailAuthTailscaleIdentityMismatch is a Tailscale-mode failure.
	DetailAuthTailscaleIdentityMismatch = "AUTH_TAILSCALE_IDENTITY_MISMATCH"
	// DetailControlUIOriginNotAllowed means a browser Origin is not allowed.
	DetailControlUIOriginNotAllowed = "CONTROL_UI_ORIGIN_NOT_ALLOWED"
	// DetailControlUIDeviceIdentityRequired means a browser client needs a
	// secure context to create a device identity.
	DetailControlUIDeviceIdentityRequired = "CONTROL_UI_DEVICE_IDENTITY_REQUIRED"
	// DetailDeviceIdentityRequired means the client must send a device.
	DetailDeviceIdentityRequired = "DEVICE_IDENTITY_REQUIRED"
	// DetailDeviceAuthInvalid is a device check failure of unknown reason.
	DetailDeviceAuthInvalid = "DEVICE_AUTH_INVALID"
	// DetailDeviceAuthDeviceIDMismatch means device.id is not the key's hash.
	DetailDeviceAuthDeviceIDMismatch = "DEVICE_AUTH_DEVICE_ID_MISMATCH"
	// DetailDeviceAuthSignatureExpired means signedAt is too far from now.
	DetailDeviceAuthSignatureExpired = "DEVICE_AUTH_SIGNATURE_EXPIRED"
	// DetailDeviceAuthNonceRequired means device.nonce was empty.
	DetailDeviceAuthNonceRequired = "DEVICE_AUTH_NONCE_REQUIRED"
	// DetailDeviceAuthNonceMismatch means device.nonce is not the challenge's.
	DetailDeviceAuthNonceMismatch = "DEVICE_AUTH_NONCE_MISMATCH"
	// DetailDeviceAuthSignatureInvalid means the signature did not verify.
	DetailDeviceAuthSignatureInvalid = "DEVICE_AUTH_SIGNATURE_INVALID"
	// DetailDeviceAuthPublicKeyInvalid means the public key is unusable.
	DetailDeviceAuthPublicKeyInvalid = "DEVICE_AUTH_PUBLIC_KEY_INVALID"
	// DetailPairingRequired means the device needs (re-)approval.
	DetailPairingRequired = "PAIRING_REQUIRED"
	// DetailMissingScope is details.code of a v4 FORBIDDEN missing-scope
	// error.
	DetailMissingScope = "MISSING_SCOPE"
)

// Values of details.recommendedNextStep on a failed connect: what a client
// should do before reconnecting.
const (
	// NextRetryWithDeviceToken: reconnect once with the cached device token.
	NextRetryWithDeviceToken = "retry_with_device_token"
	// NextUpdateAuthConfiguration: the client has no credential configured.
	NextUpdateAuthConfiguration = "update_auth_configuration"
	// NextUpdateAuthCredentials: the configured credential is wrong.
	NextUpdateAuthCredentials = "update_auth_credentials"
	// NextWaitThenRetry: rate limited; retry after the lockout.
	NextWaitThenRetry = "wait_then_retry"
	// NextReviewAuthConfiguration: anything else; a human should look.
	NextReviewAuthConfiguration = "review_auth_configuration"
)

// Values of details.reason on a PAIRING_REQUIRED error.
const (
	// PairingReasonNotPaired: the device has never been approved.
	PairingReasonNotPaired = "not-paired"
	// PairingReasonRoleUpgrade: the device asks for a role it was not granted.
	PairingReasonRoleUpgrade = "role-upgrade"
	// PairingReasonScopeUpgrade: the device asks for scopes it was not granted.
	PairingReasonScopeUpgrade = "scope-upgrade"
	// PairingReasonMetadataUpgrade: the device's identity metadata changed.
	PairingReasonMetadataUpgrade = "metadata-upgrade"
)

// WebSocket close codes the gateway uses (openclaw-facts §1.10).
const (
	// CloseNormal ends a connection normally; also the handshake timeout.
	CloseNormal = 1000
	// CloseProtocolError follows a protocol-version mismatch.
	CloseProtocolError = 1002
	// ClosePolicyViolation follows an invalid handshake, failed auth or
	// device check, pairing required, a slow consumer, or repeated
	// unauthorized calls.
	ClosePolicyViolation = 1008
	// CloseMessageTooBig follows a pre-auth frame over MaxPreauthPayloadBytes.
	CloseMessageTooBig = 1009
	// CloseTickTimeout is used by clients (not the server) when no tick
	// arrived within twice the tick interval.
	CloseTickTimeout = 4000
	// CloseAuthChanged follows a rotation of the gateway's shared secret.
	CloseAuthChanged = 4001
)

// Close reasons with fixed wording (openclaw-facts §1.2, §1.4, §1.8, §1.9).
// The handshake timeout closes with CloseNormal and no reason.
const (
	// ReasonPreauthTooLarge goes with CloseMessageTooBig.
	ReasonPreauthTooLarge = "preauth payload too large"
	// ReasonProtocolMismatch goes with CloseProtocolError.
	ReasonProtocolMismatch = "protocol mismatch"
	// ReasonInvalidRole goes with ClosePolicyViolation.
	ReasonInvalidRole = "invalid role"
	// ReasonInvalidRequestFrame closes a socket whose first frame was not a
	// valid request (no response is sent).
	ReasonInvalidRequestFrame = "invalid request frame"
	// ReasonInvalidHandshake is the fallback handshake close reason.
	ReasonInvalidHandshake = "invalid handshake"
	// ReasonDeviceIdentityRequired goes with DeviceIdentityRequired.
	ReasonDeviceIdentityRequired = "device identity required"
	// ReasonPairingRequired goes with PairingRequired.
	ReasonPairingRequired = "pairing required"
	// ReasonSlowConsumer closes a socket whose send buffer passed
	// MaxBufferedBytes.
	ReasonSlowConsumer = "slow consumer"
	// ReasonRepeatedUnauthorized closes a socket after too many
	// "unauthorized role" responses in a row.
	ReasonRepeatedUnauthorized = "repeated unauthorized calls"
	// ReasonAuthChanged goes with CloseAuthChanged.
	ReasonAuthChanged = "gateway auth changed"
	// ReasonTickTimeout goes with CloseTickTimeout (client side).
	ReasonTickTimeout = "tick timeout"
)

// Handshake error messages with fixed wording (openclaw-facts §1.4).
const (
	// MessageFirstRequestMustBeConnect answers a valid first request whose
	// method is not "connect".
	MessageFirstRequestMustBeConnect = "invalid handshake: first request must be connect"
	// MessageProtocolMismatch answers a connect with no common version.
	MessageProtocolMismatch = "protocol mismatch"
	// MessageInvalidRole answers a connect whose role is not operator or node.
	MessageInvalidRole = "invalid role"
	// MessageDeviceIdentityRequired answers a connect that needs a device.
	MessageDeviceIdentityRequired = "device identity required"
	// MessagePairingRequired answers a connect from an unapproved device.
	MessagePairingRequired = "pairing required"
)

// maxCloseReasonBytes is OpenClaw's cap on close reasons; RFC 6455 allows
// 123 bytes.
const maxCloseReasonBytes = 120

// TruncateCloseReason cuts reason to at most 120 bytes without splitting a
// UTF-8 sequence, and replaces an empty reason with "invalid handshake", as
// OpenClaw's truncateCloseReason does for handshake failures.
func TruncateCloseReason(reason string) string {
	if reason == "" {
		return ReasonInvalidHandshake
	}
	if len(reason) <= maxCloseReasonBytes {
		return reason
	}
	end := 0
	for end < maxCloseReasonBytes {
		n := utf8SeqLen(reason[end])
		if end+n > maxCloseReasonBytes {
			break
		}
		end += n
	}
	return reason[:end]
}

// utf8SeqLen is the length of the UTF-8 sequence a lead byte announces,
// counting a stray continuation byte as a two-byte lead like OpenClaw does.
func utf8SeqLen(b byte) int {
	switch {
	case b < 0x80:
		return 1
	case b < 0xe0:
		return 2
	case b < 0xf0:
		return 3
	}
	return 4
}

// NewError builds an ErrorShape with a code and message.
func NewError(code, message string) *ErrorShape {
	return &ErrorShape{Code: code, Message: message}
}

// InvalidRequest builds an INVALID_REQUEST error; details may be nil.
func InvalidRequest(message string, details any) *ErrorShape {
	return &ErrorShape{Code: CodeInvalidRequest, Message: message, Details: details}
}

// Unavailable builds a retryable UNAVAILABLE error; a retryAfterMs of zero
// or less leaves retryAfterMs out.
func Unavailable(message string, retryAfterMs int64) *ErrorShape {
	e := &ErrorShape{Code: CodeUnavailable, Message: message, Retryable: true}
	if retryAfterMs > 0 {
		e.RetryAfterMs = &retryAfterMs
	}
	return e
}

// UnknownMethod is the error for a method the gateway does not implement:
// INVALID_REQUEST "unknown method: <m>".
func UnknownMethod(method string) *ErrorShape {
	return InvalidRequest("unknown method: "+method, nil)
}

// StartupUnavailable is the error for a method called while the gateway is
// still starting: retryable UNAVAILABLE "<m> unavailable during gateway
// startup" with retryAfterMs 500.
func StartupUnavailable(method string) *ErrorShape {
	return Unavailable(method+" unavailable during gateway startup", 500)
}

// ProtocolMismatchDetails is details of a "protocol mismatch" connect error.
// OpenClaw v3 sends only expectedProtocol; the supported range is
// Switchboard's addition so a client can tell what to offer.
type ProtocolMismatchDetails struct {
	// ExpectedProtocol is the newest version the server speaks.
	ExpectedProtocol int `json:"expectedProtocol"`
	// MinProtocol is the oldest version the server speaks.
	MinProtocol int `json:"minProtocol"`
	// MaxProtocol is the newest version the server speaks.
	MaxProtocol int `json:"maxProtocol"`
}

// ProtocolMismatch is the connect error for a client whose protocol range
// does not overlap [MinProtocol, MaxProtocol]; close with
// CloseProtocolError and ReasonProtocolMismatch.
func ProtocolMismatch() *ErrorShape {
	return InvalidRequest(MessageProtocolMismatch, ProtocolMismatchDetails{
		ExpectedProtocol: MaxProtocol, MinProtocol: MinProtocol, MaxProtocol: MaxProtocol,
	})
}

// CodeDetails is a details object carrying only a code.
type CodeDetails struct {
	// Code is a Detail* value.
	Code string `json:"code"`
}

// DeviceIdentityRequired is the connect error for a client that must
// present a device identity: NOT_PAIRED "device identity required" with
// details.code DEVICE_IDENTITY_REQUIRED.
func DeviceIdentityRequired() *ErrorShape {
	return &ErrorShape{Code: CodeNotPaired, Message: MessageDeviceIdentityRequired,
		Details: CodeDetails{Code: DetailDeviceIdentityRequired}}
}

// PairingDetails is details of a PAIRING_REQUIRED connect error.
type PairingDetails struct {
	// Code is DetailPairingRequired.
	Code string `json:"code"`
	// Reason is a PairingReason* value, if known.
	Reason string `json:"reason,omitempty"`
	// RequestID names the pending pairing request an operator must approve.
	RequestID string `json:"requestId,omitempty"`
}

// PairingRequired is the connect error for a device that needs approval:
// NOT_PAIRED "pairing required" with details {code:"PAIRING_REQUIRED",
// requestId?, reason?}; close with ClosePolicyViolation and
// ReasonPairingRequired.
func PairingRequired(requestID, reason string) *ErrorShape {
	return &ErrorShape{Code: CodeNotPaired, Message: MessagePairingRequired,
		Details: PairingDetails{Code: DetailPairingRequired, Reason: reason, RequestID: requestID}}
}

// MissingScopeDetails is details of a v4 FORBIDDEN missing-scope error.
type MissingScopeDetails struct {
	// Code is DetailMissingScope.
	Code string `json:"code"`
	// MissingScope is the scope the caller lacks.
	MissingScope string `json:"missingScope"`
	// RequiredScopes are the scopes that would satisfy the check.
	RequiredScopes []string `json:"requiredScopes"`
}

// MissingScope is the error for an operator lacking scope: v3 sends
// INVALID_REQUEST "missing scope: <scope>", v4 sends FORBIDDEN with the same
// message and MissingScopeDetails.
func MissingScope(scope string, protocol int) *ErrorShape {
	message := "missing scope: " + scope
	if protocol < ProtocolV4 {
		return InvalidRequest(message, nil)
	}
	return &ErrorShape{Code: CodeForbidden, Message: message, Details: MissingScopeDetails{
		Code: DetailMissingScope, MissingScope: scope, RequiredScopes: []string{scope},
	}}
}

// UnauthorizedRole is the error for a method the connection's role may not
// call: INVALID_REQUEST "unauthorized role: <role>" in both versions.
// OpenClaw closes the socket after more than UnauthorizedFloodLimit of these
// in a row.
func UnauthorizedRole(role string) *ErrorShape {
	return InvalidRequest("unauthorized role: "+role, nil)
}

// UnauthorizedFloodLimit is how many consecutive "unauthorized role"
// responses a socket may receive; the next one closes it with
// ClosePolicyViolation and ReasonRepeatedUnauthorized.
const UnauthorizedFloodLimit = 10

// Error makes an ErrorShape usable as a Go error; the text is
// "<code>: <message>".
func (e *ErrorShape) Error() string {
	if e == nil {
		return "<nil>"
	}
	s := e.Code + ": " + e.Message
	if e.RetryAfterMs != nil {
		s += " (retry after " + strconv.FormatInt(*e.RetryAfterMs, 10) + "ms)"
	}
	return s
}
