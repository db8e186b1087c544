package auth

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestRateLimiterLockout(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{})
	const ip = "203.0.113.7"
	for i := range 9 {
		l.Failure(ip, ScopeSharedSecret, t0.Add(time.Duration(i)*time.Second))
		if ok, _ := l.Check(ip, ScopeSharedSecret, t0.Add(time.Duration(i)*time.Second)); !ok {
			t.Fatalf("locked after %d failures", i+1)
		}
	}
	now := t0.Add(9 * time.Second)
	l.Failure(ip, ScopeSharedSecret, now) // the 10th inside 60 s
	ok, retry := l.Check(ip, ScopeSharedSecret, now)
	if ok || retry != 5*time.Minute {
		t.Fatalf("after 10 failures: allowed=%v retry=%v", ok, retry)
	}
	// Failures during a lockout do not extend it.
	l.Failure(ip, ScopeSharedSecret, now.Add(time.Minute))
	if ok, retry := l.Check(ip, ScopeSharedSecret, now.Add(4*time.Minute)); ok || retry != time.Minute {
		t.Fatalf("during lockout: allowed=%v retry=%v", ok, retry)
	}
	// Other scopes and addresses are independent.
	if ok, _ := l.Check(ip, ScopeDeviceToken, now); !ok {
		t.Error("device-token scope locked by shared-secret failures")
	}
	if ok, _ := l.Check("203.0.113.8", ScopeSharedSecret, now); !ok {
		t.Error("another address locked")
	}
	// The lockout ends after 5 minutes with a clean slate.
	end := now.Add(5 * time.Minute)
	if ok, retry := l.Check(ip, ScopeSharedSecret, end); !ok || retry != 0 {
		t.Fatalf("after lockout: allowed=%v retry=%v", ok, retry)
	}
	l.Failure(ip, ScopeSharedSecret, end)
	if ok, _ := l.Check(ip, ScopeSharedSecret, end); !ok {
		t.Error("old failures survived the lockout")
	}
}

func TestRateLimiterSlidingWindow(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{})
	const ip = "198.51.100.1"
	// Nine failures, then the tenth 61 s after the first: only nine are in
	// the window, so no lockout.
	for i := range 9 {
		l.Failure(ip, "", t0.Add(time.Duration(i)*time.Second))
	}
	l.Failure(ip, "", t0.Add(61*time.Second))
	if ok, _ := l.Check(ip, "", t0.Add(61*time.Second)); !ok {
		t.Fatal("locked although the first failure left the window")
	}
	// A failure exactly 60 s old has left the window (OpenClaw keeps ts > now-60s).
	l2 := NewRateLimiter(RateLimitConfig{MaxAttempts: 2})
	l2.Failure(ip, "", t0)
	l2.Failure(ip, "", t0.Add(time.Minute))
	if ok, _ := l2.Check(ip, "", t0.Add(time.Minute)); !ok {
		t.Fatal("failure at exactly the window edge still counted")
	}
	l2.Failure(ip, "", t0.Add(time.Minute+time.Second))
	if ok, _ := l2.Check(ip, "", t0.Add(time.Minute+time.Second)); ok {
		t.Fatal("two failures within the window did not lock")
	}
}

func TestRateLimiterSuccessResets(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{MaxAttempts: 3})
	for range 3 {
		l.Failure("192.0.2.1", ScopeSharedSecret, t0)
	}
	if ok, _ := l.Check("192.0.2.1", ScopeSharedSecret, t0); ok {
		t.Fatal("not locked")
	}
	l.Success("192.0.2.1", ScopeSharedSecret)
	if ok, _ := l.Check("192.0.2.1", ScopeSharedSecret, t0); !ok || l.Len() != 0 {
		t.Fatalf("Success did not reset (len %d)", l.Len())
	}
}

func TestRateLimiterAddressNormalization(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{MaxAttempts: 3})
	for _, spelling := range []string{"192.0.2.9", "::ffff:192.0.2.9", "[::ffff:192.0.2.9]"} {
		l.Failure(spelling, ScopeSharedSecret, t0)
	}
	if ok, _ := l.Check(" 192.0.2.9 ", ScopeSharedSecret, t0); ok {
		t.Error("IPv4-mapped spellings counted separately")
	}
	if l.Len() != 1 {
		t.Errorf("Len = %d", l.Len())
	}
	// An empty scope is the default scope; an empty address is "unknown".
	l.Failure("", "", t0)
	l.Failure("", ScopeDefault, t0)
	l.Failure("", " ", t0)
	if ok, _ := l.Check("", "", t0); ok {
		t.Error("empty address and scope not shared")
	}
	// Unparsable input is its own key, compared case-insensitively.
	l.Failure("Host-A", "", t0)
	l.Failure("host-a", "", t0)
	l.Failure("HOST-A", "", t0)
	if ok, _ := l.Check("host-A", "", t0); ok {
		t.Error("hostnames not normalized")
	}
}

func TestRateLimiterLoopback(t *testing.T) {
	limited := NewRateLimiter(RateLimitConfig{MaxAttempts: 2})
	exempt := NewRateLimiter(RateLimitConfig{MaxAttempts: 2, ExemptLoopback: true})
	for _, ip := range []string{"127.0.0.1", "127.5.6.7", "::1", "::ffff:127.0.0.1"} {
		for range 2 {
			limited.Failure(ip, "", t0)
			exempt.Failure(ip, "", t0)
		}
		if ok, _ := limited.Check(ip, "", t0); ok {
			t.Errorf("%s: loopback exempt by default", ip)
		}
		if ok, _ := exempt.Check(ip, "", t0); !ok {
			t.Errorf("%s: not exempt with ExemptLoopback", ip)
		}
	}
	if exempt.Len() != 0 {
		t.Errorf("exempt limiter tracked %d entries", exempt.Len())
	}
}

func TestRateLimiterPrunesLazily(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{MaxAttempts: 2})
	for i := range 100 {
		l.Failure(fmt.Sprintf("10.0.0.%d", i), "", t0)
	}
	l.Failure("10.1.0.1", "", t0) // locks 10.1.0.1
	l.Failure("10.1.0.1", "", t0)
	if l.Len() != 101 {
		t.Fatalf("Len = %d", l.Len())
	}
	// One window later the next call sweeps every expired entry but the
	// locked one.
	l.Check("10.9.9.9", "", t0.Add(time.Minute+time.Second))
	if l.Len() != 1 {
		t.Fatalf("after sweep Len = %d", l.Len())
	}
	if ok, _ := l.Check("10.1.0.1", "", t0.Add(2*time.Minute)); ok {
		t.Error("sweep dropped a locked entry")
	}
}

func TestRateLimiterBoundedMemory(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{MaxAttempts: 2, MaxEntries: 5})
	// Lock out one address first, then flood with fresh ones.
	l.Failure("192.0.2.1", "", t0)
	l.Failure("192.0.2.1", "", t0)
	for i := range 50 {
		l.Failure(fmt.Sprintf("198.51.100.%d", i), "", t0)
		if l.Len() > 5 {
			t.Fatalf("Len = %d > MaxEntries", l.Len())
		}
	}
	if ok, _ := l.Check("192.0.2.1", "", t0); ok {
		t.Error("flood evicted a locked-out address")
	}
	// The newest address is tracked; the oldest unlocked ones went.
	l.Failure("198.51.100.49", "", t0)
	if ok, _ := l.Check("198.51.100.49", "", t0); ok {
		t.Error("newest entry was evicted")
	}
	if ok, _ := l.Check("198.51.100.0", "", t0); !ok {
		t.Error("oldest entry kept")
	}

	// When every other entry is locked, the oldest goes anyway.
	full := NewRateLimiter(RateLimitConfig{MaxAttempts: 1, MaxEntries: 2})
	full.Failure("192.0.2.1", "", t0)
	full.Failure("192.0.2.2", "", t0)
	full.Failure("192.0.2.3", "", t0)
	if full.Len() != 2 {
		t.Fatalf("Len = %d", full.Len())
	}
	if ok, _ := full.Check("192.0.2.1", "", t0); !ok {
		t.Error("oldest locked entry kept over the cap")
	}
	if ok, _ := full.Check("192.0.2.3", "", t0); ok {
		t.Error("newest entry not tracked")
	}
}

func TestRateLimiterConcurrent(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{MaxEntries: 64})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				ip := fmt.Sprintf("10.%d.%d.1", g, i%100)
				now := t0.Add(time.Duration(i) * time.Second)
				l.Failure(ip, ScopeSharedSecret, now)
				l.Check(ip, ScopeSharedSecret, now)
				if i%7 == 0 {
					l.Success(ip, ScopeSharedSecret)
				}
			}
		})
	}
	wg.Wait()
	if l.Len() > 64 {
		t.Errorf("Len = %d", l.Len())
	}
}

// TestRateLimiterGlobalBudget: failures from any number of addresses share
// one budget of GlobalMaxFailures per Window, refilled steadily, and the
// per-address check alone ignores it.
func TestRateLimiterGlobalBudget(t *testing.T) {
	l := NewRateLimiter(RateLimitConfig{})
	for i := range 60 {
		ip := fmt.Sprintf("198.51.100.%d", i)
		if ok, _ := l.Check(ip, ScopeSharedSecret, t0); !ok {
			t.Fatalf("failure %d refused before the budget was spent", i+1)
		}
		l.Failure(ip, ScopeSharedSecret, t0)
	}
	ok, retry := l.Check("203.0.113.1", ScopeDeviceToken, t0)
	if ok || retry != time.Second {
		t.Fatalf("a fresh address after 60 failures anywhere: allowed=%v retry=%v, want refused for 1s", ok, retry)
	}
	if ok, _ := l.CheckAddress("203.0.113.1", ScopeDeviceToken, t0); !ok {
		t.Error("CheckAddress refused an address with no failures")
	}
	// It refills at one a second: a throttle, not a lockout.
	if ok, retry := l.Check("203.0.113.1", ScopeSharedSecret, t0.Add(500*time.Millisecond)); ok || retry != 500*time.Millisecond {
		t.Errorf("half a second later: allowed=%v retry=%v", ok, retry)
	}
	now := t0.Add(time.Second)
	if ok, _ := l.Check("203.0.113.1", ScopeSharedSecret, now); !ok {
		t.Fatal("a second later: still refused")
	}
	l.Failure("203.0.113.1", ScopeSharedSecret, now)
	if ok, _ := l.Check("203.0.113.2", ScopeSharedSecret, now); ok {
		t.Error("the refilled token was used and the budget is spent again, but a check passed")
	}
	if ok, _ := l.Check("203.0.113.2", ScopeSharedSecret, now.Add(time.Minute)); !ok {
		t.Error("a minute later: still refused")
	}

	off := NewRateLimiter(RateLimitConfig{GlobalMaxFailures: -1})
	for i := range 100 {
		off.Failure(fmt.Sprintf("198.51.100.%d", i), ScopeSharedSecret, t0)
	}
	if ok, _ := off.Check("203.0.113.1", ScopeSharedSecret, t0); !ok {
		t.Error("GlobalMaxFailures -1 still throttles")
	}
}
