package whatsapp

import (
	"errors"
	"fmt"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/bridges"
)

// connKind is what a connection event means for the session loop.
type connKind int

const (
	evIgnore    connKind = iota
	evConnected          // logged in and receiving
	evDegraded           // still connected, but keepalives fail
	evReconnect          // transient: back off and connect again
	evTerminal           // stop; the owner must act
)

// connEvent is a classified connection event.
type connEvent struct {
	kind  connKind
	state bridges.State // for evTerminal
	err   error
}

// ownerLogout is the session loop's event for an explicit logout.
type ownerLogout struct{}

// isConnEvent reports the whatsmeow events the session loop follows.
func isConnEvent(evt any) bool {
	switch evt.(type) {
	case *events.Connected, *events.Disconnected, *events.KeepAliveTimeout, *events.KeepAliveRestored,
		*events.LoggedOut, *events.StreamReplaced, *events.TemporaryBan, *events.ClientOutdated,
		*events.ConnectFailure, *events.StreamError, *events.CATRefreshError:
		return true
	}
	return false
}

// classify maps a connection event to what the bridge does about it
// (reliability-security §2.6: a logout is terminal and says how to
// relink; nothing but an explicit logout deletes credentials).
func classify(evt any, now time.Time) connEvent {
	switch e := evt.(type) {
	case *events.Connected:
		return connEvent{kind: evConnected}
	case *events.KeepAliveRestored:
		return connEvent{kind: evConnected}
	case *events.Disconnected:
		return connEvent{kind: evReconnect, err: errors.New("whatsapp: the connection to WhatsApp was lost; reconnecting")}
	case *events.StreamError:
		return connEvent{kind: evReconnect, err: fmt.Errorf("whatsapp: stream error %q; reconnecting", e.Code)}
	case *events.KeepAliveTimeout:
		err := fmt.Errorf("whatsapp: %d keepalive pings unanswered since %s", e.ErrorCount, e.LastSuccess.UTC().Format(time.RFC3339))
		if now.Sub(e.LastSuccess) > whatsmeow.KeepAliveMaxFailTime {
			return connEvent{kind: evReconnect, err: err}
		}
		return connEvent{kind: evDegraded, err: err}
	case ownerLogout:
		return connEvent{kind: evTerminal, state: bridges.StateLoggedOut, err: errors.New(
			"whatsapp: logged out by the owner; link again with `switchboard whatsapp link` or from the web page")}
	case *events.LoggedOut:
		return connEvent{kind: evTerminal, state: bridges.StateLoggedOut, err: fmt.Errorf(
			"whatsapp: WhatsApp logged this device out (%s); link it again with `switchboard whatsapp link` or from the web page", e.Reason)}
	case *events.StreamReplaced:
		return connEvent{kind: evTerminal, state: bridges.StateFailed, err: errors.New(
			"whatsapp: another client opened this WhatsApp session (stream replaced); stop the other Switchboard or WhatsApp Web client using these credentials, then restart")}
	case *events.TemporaryBan:
		return connEvent{kind: evTerminal, state: bridges.StateFailed, err: fmt.Errorf(
			"whatsapp: WhatsApp temporarily banned this account: %s; restart Switchboard after it expires", e)}
	case *events.ClientOutdated:
		return connEvent{kind: evTerminal, state: bridges.StateFailed, err: errors.New(
			"whatsapp: WhatsApp refused this client version as outdated (405); update Switchboard")}
	case *events.CATRefreshError:
		return connEvent{kind: evTerminal, state: bridges.StateFailed, err: fmt.Errorf("whatsapp: refreshing the client token failed: %v", e.Error)}
	case *events.ConnectFailure:
		switch e.Reason {
		case events.ConnectFailureServiceUnavailable, events.ConnectFailureInternalServerError:
			// WhatsApp's own outage: worth retrying.
			return connEvent{kind: evReconnect, err: fmt.Errorf("whatsapp: WhatsApp is unavailable (%d %s); reconnecting", int(e.Reason), e.Reason)}
		}
		state := bridges.StateFailed
		hint := "check the account on the phone, then restart"
		if e.Reason.IsLoggedOut() {
			state, hint = bridges.StateLoggedOut, "link it again with `switchboard whatsapp link`"
		}
		msg := ""
		if e.Message != "" {
			msg = ": " + e.Message
		}
		return connEvent{kind: evTerminal, state: state, err: fmt.Errorf(
			"whatsapp: WhatsApp refused the connection (%d %s%s); %s", int(e.Reason), e.Reason, msg, hint)}
	}
	return connEvent{kind: evIgnore}
}
