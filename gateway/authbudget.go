package gateway

import (
	"context"
	"time"

	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// authAllowed reports whether c's connect may have its credentials for
// scope checked now, and if not, how long until it may. Its address must
// not be locked out, and the global budget of failures must not be spent
// (auth.RateLimitConfig.GlobalMaxFailures): behind that budget guessing is
// held to a rate, whatever the number of addresses.
//
// While the budget is spent, a connect signed by a device that is already
// paired is still checked, on its address's budget alone. A global
// lockout anyone can trigger would otherwise lock the owner out for as
// long as an attack lasts; the signature is over this socket's challenge
// nonce with a key the store knows, which a guessing botnet does not hold,
// so the exemption gives it nothing. Shared-secret clients without a
// device wait like everyone else: the gateway cannot tell the owner's
// right token from an attacker's lucky guess without checking it, and
// checking it is what the budget rations.
//
// It reads the store only while the budget is spent; it does no other IO.
func (s *Server) authAllowed(c *conn, p protocol.ConnectParams, scope string, now time.Time) (bool, time.Duration) {
	if ok, retry := s.limiter.CheckAddress(c.ip, scope, now); !ok {
		return false, retry
	}
	ok, retry := s.limiter.CheckGlobal(now)
	if ok || s.signedByPairedDevice(c, p, now) {
		return true, 0
	}
	return false, retry
}

// signedByPairedDevice reports whether p carries a valid device proof for
// c's challenge from a device the store has paired.
func (s *Server) signedByPairedDevice(c *conn, p protocol.ConnectParams, now time.Time) bool {
	proof, fields, ok := auth.FromConnect(p)
	if !ok || auth.VerifyDevice(proof, fields, c.nonce, now) != nil {
		return false
	}
	b := s.backend.Load()
	if b == nil || b.Store == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(c.ctx, storeTimeout)
	defer cancel()
	_, paired, err := b.Store.GetDevice(ctx, proof.ID)
	return err == nil && paired
}
