package auth

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

var (
	cliClient     = protocol.ClientInfo{ID: protocol.ClientCLI, Mode: protocol.ModeCLI, Version: "1", Platform: "linux"}
	uiClient      = protocol.ClientInfo{ID: protocol.ClientControlUI, Mode: protocol.ModeUI, Version: "1", Platform: "web"}
	webchatClient = protocol.ClientInfo{ID: protocol.ClientWebchat, Mode: protocol.ModeWebchat, Version: "1", Platform: "web"}
	backend       = protocol.ClientInfo{ID: protocol.ClientGateway, Mode: protocol.ModeBackend, Version: "1", Platform: "linux"}
)

func TestConnectFailureError(t *testing.T) {
	token := &protocol.ConnectAuth{Token: "nope"}
	tests := []struct {
		name string
		f    ConnectFailure
		want string
	}{
		{"token missing, backend", ConnectFailure{Reason: FailTokenMissing, Mode: ModeToken, Client: backend},
			`{"code":"INVALID_REQUEST","message":"unauthorized: no gateway token was given: send the gateway's token; \"switchboard gateway token\" prints it on the gateway's machine",` +
				`"details":{"code":"AUTH_TOKEN_MISSING","authReason":"token_missing","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_configuration"}}`},
		{"token missing, CLI", ConnectFailure{Reason: FailTokenMissing, Mode: ModeToken, Client: cliClient},
			`{"code":"INVALID_REQUEST","message":"unauthorized: no gateway token was given: \"switchboard gateway token\" prints it on the gateway's machine; run this command with the daemon's --config, so that both read the same token",` +
				`"details":{"code":"AUTH_TOKEN_MISSING","authReason":"token_missing","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_configuration"}}`},
		{"token mismatch, Control UI", ConnectFailure{Reason: FailTokenMismatch, Mode: ModeToken, Client: uiClient, Auth: token},
			`{"code":"INVALID_REQUEST","message":"unauthorized: wrong gateway token: paste the token; \"switchboard gateway token\" prints it on the gateway's machine",` +
				`"details":{"code":"AUTH_TOKEN_MISMATCH","authReason":"token_mismatch","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_credentials"}}`},
		{"token mismatch with a device: retry with device token", ConnectFailure{Reason: FailTokenMismatch, Mode: ModeToken, Client: backend, Auth: token, HasDevice: true},
			`{"code":"INVALID_REQUEST","message":"unauthorized: wrong gateway token: send the gateway's token; \"switchboard gateway token\" prints it on the gateway's machine",` +
				`"details":{"code":"AUTH_TOKEN_MISMATCH","authReason":"token_mismatch","canRetryWithDeviceToken":true,"recommendedNextStep":"retry_with_device_token"}}`},
		{"token mismatch with a device token already sent", ConnectFailure{Reason: FailTokenMismatch, Mode: ModeToken, Client: backend,
			Auth: &protocol.ConnectAuth{Token: "nope", DeviceToken: "dt"}, HasDevice: true},
			`{"code":"INVALID_REQUEST","message":"unauthorized: wrong gateway token: send the gateway's token; \"switchboard gateway token\" prints it on the gateway's machine",` +
				`"details":{"code":"AUTH_TOKEN_MISMATCH","authReason":"token_mismatch","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_credentials"}}`},
		{"token not configured", ConnectFailure{Reason: FailTokenNotConfigured, Mode: ModeToken, Client: backend},
			`{"code":"INVALID_REQUEST","message":"unauthorized: the gateway has no token to check against: set gateway.auth.token in its configuration",` +
				`"details":{"code":"AUTH_TOKEN_NOT_CONFIGURED","authReason":"token_missing_config","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_configuration"}}`},
		{"password missing, web chat", ConnectFailure{Reason: FailPasswordMissing, Mode: ModePassword, Client: webchatClient},
			`{"code":"INVALID_REQUEST","message":"unauthorized: no gateway password was given: enter the password set in gateway.auth.password of the gateway's configuration",` +
				`"details":{"code":"AUTH_PASSWORD_MISSING","authReason":"password_missing","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_configuration"}}`},
		{"password mismatch, CLI", ConnectFailure{Reason: FailPasswordMismatch, Mode: ModePassword, Client: cliClient, Auth: &protocol.ConnectAuth{Password: "x"}},
			`{"code":"INVALID_REQUEST","message":"unauthorized: wrong gateway password: run this command with the daemon's --config, so that both read the same gateway.auth.password",` +
				`"details":{"code":"AUTH_PASSWORD_MISMATCH","authReason":"password_mismatch","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_credentials"}}`},
		{"password not configured", ConnectFailure{Reason: FailPasswordNotConfigured, Mode: ModePassword, Client: backend},
			`{"code":"INVALID_REQUEST","message":"unauthorized: the gateway has no password to check against: set gateway.auth.password in its configuration",` +
				`"details":{"code":"AUTH_PASSWORD_NOT_CONFIGURED","authReason":"password_missing_config","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_configuration"}}`},
		{"rate limited", ConnectFailure{Reason: FailRateLimited, Mode: ModeToken, Client: backend, Auth: token, RetryAfter: 90 * time.Second},
			`{"code":"INVALID_REQUEST","message":"unauthorized: too many failed attempts from this address: wait, then try again with the right credential",` +
				`"details":{"code":"AUTH_RATE_LIMITED","authReason":"rate_limited","canRetryWithDeviceToken":false,"recommendedNextStep":"wait_then_retry"},` +
				`"retryable":true,"retryAfterMs":90000}`},
		{"device token mismatch", ConnectFailure{Reason: FailDeviceTokenMismatch, Mode: ModeToken, Client: backend, Auth: token, HasDevice: true},
			`{"code":"INVALID_REQUEST","message":"unauthorized: this device's token is not valid here (revoked, or from another gateway): connect with the gateway token to get a new one; \"switchboard gateway token\" prints it on the gateway's machine",` +
				`"details":{"code":"AUTH_DEVICE_TOKEN_MISMATCH","authReason":"device_token_mismatch","canRetryWithDeviceToken":false,"recommendedNextStep":"update_auth_credentials"}}`},
		{"bootstrap token invalid", ConnectFailure{Reason: FailBootstrapTokenInvalid, Mode: ModeToken, Client: backend, Auth: &protocol.ConnectAuth{BootstrapToken: "bt"}},
			`{"code":"INVALID_REQUEST","message":"unauthorized",` +
				`"details":{"code":"AUTH_BOOTSTRAP_TOKEN_INVALID","authReason":"bootstrap_token_invalid","canRetryWithDeviceToken":false,"recommendedNextStep":"review_auth_configuration"}}`},
		{"no reason, token mode, nothing sent", ConnectFailure{Mode: ModeToken, Client: backend},
			`{"code":"INVALID_REQUEST","message":"unauthorized: no gateway token was given: send the gateway's token; \"switchboard gateway token\" prints it on the gateway's machine",` +
				`"details":{"code":"AUTH_REQUIRED","canRetryWithDeviceToken":false,"recommendedNextStep":"review_auth_configuration"}}`},
		{"no reason, token mode, device token sent", ConnectFailure{Mode: ModeToken, Client: backend, Auth: &protocol.ConnectAuth{DeviceToken: "dt"}},
			`{"code":"INVALID_REQUEST","message":"unauthorized: this device's token was refused: connect with the gateway token to pair it again; \"switchboard gateway token\" prints it on the gateway's machine",` +
				`"details":{"code":"AUTH_REQUIRED","canRetryWithDeviceToken":false,"recommendedNextStep":"review_auth_configuration"}}`},
		{"no reason, password mode, nothing sent", ConnectFailure{Mode: ModePassword, Client: uiClient},
			`{"code":"INVALID_REQUEST","message":"unauthorized: no gateway password was given: enter the password set in gateway.auth.password of the gateway's configuration",` +
				`"details":{"code":"AUTH_REQUIRED","canRetryWithDeviceToken":false,"recommendedNextStep":"review_auth_configuration"}}`},
		{"unknown reason", ConnectFailure{Reason: "tailscale_user_missing_x", Mode: ModeToken, Client: backend, Auth: token},
			`{"code":"INVALID_REQUEST","message":"unauthorized",` +
				`"details":{"code":"AUTH_UNAUTHORIZED","authReason":"tailscale_user_missing_x","canRetryWithDeviceToken":false,"recommendedNextStep":"review_auth_configuration"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(ConnectFailureError(tt.f))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCheckSharedSecret(t *testing.T) {
	const configured = "3f9c2a7e4b1d8f06a5c3e9b27d4f1a80c6e2b9d4f7a13c58"
	tests := []struct {
		name       string
		mode       string
		configured string
		auth       *protocol.ConnectAuth
		want       string
	}{
		{"none passes", ModeNone, "", nil, ""},
		{"token ok", ModeToken, configured, &protocol.ConnectAuth{Token: configured}, ""},
		{"token missing", ModeToken, configured, nil, FailTokenMissing},
		{"token empty", ModeToken, configured, &protocol.ConnectAuth{Password: configured}, FailTokenMissing},
		{"token wrong", ModeToken, configured, &protocol.ConnectAuth{Token: configured + "x"}, FailTokenMismatch},
		{"token not configured", ModeToken, "", &protocol.ConnectAuth{Token: "x"}, FailTokenNotConfigured},
		{"password ok", ModePassword, "pw-pw-pw-pw-pw-pw", &protocol.ConnectAuth{Password: "pw-pw-pw-pw-pw-pw"}, ""},
		{"password missing", ModePassword, "pw", &protocol.ConnectAuth{Token: "pw"}, FailPasswordMissing},
		{"password wrong", ModePassword, "pw", &protocol.ConnectAuth{Password: "PW"}, FailPasswordMismatch},
		{"password not configured", ModePassword, "", &protocol.ConnectAuth{Password: "x"}, FailPasswordNotConfigured},
		{"trusted proxy is not decided here", ModeTrustedProxy, "", nil, FailUnsupportedMode},
		{"unknown mode fails closed", "tailscale", configured, &protocol.ConnectAuth{Token: configured}, FailUnsupportedMode},
	}
	for _, tt := range tests {
		if got := CheckSharedSecret(tt.mode, tt.configured, tt.auth); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	if d := ConnectErrorDetails(ConnectFailure{Reason: FailUnsupportedMode}); d.Code != protocol.DetailAuthUnauthorized {
		t.Errorf("unsupported mode code %q", d.Code)
	}
}
