package auth

import (
	"container/list"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Rate-limit scopes: independent counters for different credential kinds
// sharing one limiter (src/gateway/auth-rate-limit.ts).
const (
	// ScopeDefault is used when a caller passes an empty scope.
	ScopeDefault = "default"
	// ScopeSharedSecret counts failed gateway token and password attempts.
	ScopeSharedSecret = "shared-secret"
	// ScopeDeviceToken counts failed device-token attempts.
	ScopeDeviceToken = "device-token"
	// ScopeHookAuth counts failed webhook bearer attempts.
	ScopeHookAuth = "hook-auth"
)

// RateLimitConfig configures a RateLimiter. The zero value is OpenClaw's
// policy: 10 failures in a sliding 60 s window lock the (address, scope)
// out for 5 minutes, at most 10,000 entries are tracked, and loopback
// addresses are limited like any other; plus Switchboard's global budget of
// 60 failures a minute from all addresses together.
type RateLimitConfig struct {
	// MaxAttempts is how many failures inside Window trigger a lockout;
	// zero means 10.
	MaxAttempts int
	// Window is the sliding window failures are counted in; zero means
	// 60 s.
	Window time.Duration
	// Lockout is how long a locked-out address is refused; zero means
	// 5 min.
	Lockout time.Duration
	// MaxEntries caps the tracked (address, scope) pairs; the oldest
	// entries are evicted first, locked-out ones last. Zero means 10,000.
	MaxEntries int
	// ExemptLoopback skips limiting for 127.0.0.0/8 and ::1, as OpenClaw
	// does by default. Switchboard leaves it off: behind a reverse proxy on
	// the same host every client arrives from loopback (reliability-security
	// §1.2 A1), and the limiter must not be the part that trusts it.
	ExemptLoopback bool
	// GlobalMaxFailures is how many failures, from all addresses
	// together, pass per Window before every address is throttled: the
	// per-address lockout alone let sixty addresses guess about 1,800
	// times a second. It is a token bucket, not a lockout: it holds
	// GlobalMaxFailures tokens and refills at GlobalMaxFailures per
	// Window, each failure takes one, and while it is empty Check refuses
	// everyone until the next token, so guessing is held to that rate and
	// no one is locked out for longer than a token takes. Zero means 60;
	// negative turns the budget off.
	GlobalMaxFailures int
}

// RateLimiter counts failed authentication attempts per (address, scope)
// and locks an address out after too many, and counts all failures
// together against a global budget that throttles every address. It is
// safe for concurrent use; memory is bounded by MaxEntries and expired
// entries are pruned lazily, so it needs no background goroutine. Every
// time-dependent method takes the current time.
type RateLimiter struct {
	cfg RateLimitConfig

	mu        sync.Mutex
	entries   map[string]*list.Element // key → element holding *limitEntry
	order     *list.List               // insertion order, oldest first
	lastSweep time.Time

	tokens   float64   // the global budget's tokens at tokensAt
	tokensAt time.Time // zero: the bucket is full
}

// limitEntry is the state of one (address, scope).
type limitEntry struct {
	key         string
	failures    []time.Time // inside the window, oldest first
	lockedUntil time.Time   // zero when not locked
}

func (e *limitEntry) locked(now time.Time) bool {
	return !e.lockedUntil.IsZero() && now.Before(e.lockedUntil)
}

// NewRateLimiter returns a limiter; zero fields of cfg take their
// documented defaults.
func NewRateLimiter(cfg RateLimitConfig) *RateLimiter {
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 10
	}
	if cfg.Window <= 0 {
		cfg.Window = time.Minute
	}
	if cfg.Lockout <= 0 {
		cfg.Lockout = 5 * time.Minute
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 10_000
	}
	if cfg.GlobalMaxFailures == 0 {
		cfg.GlobalMaxFailures = 60
	}
	return &RateLimiter{cfg: cfg, entries: map[string]*list.Element{}, order: list.New()}
}

// Check reports whether ip may attempt to authenticate in scope now, by
// its address's lockout and by the global budget, and when it may not, how
// long until it may.
func (l *RateLimiter) Check(ip, scope string, now time.Time) (allowed bool, retryAfter time.Duration) {
	if ok, retry := l.CheckAddress(ip, scope, now); !ok {
		return false, retry
	}
	return l.CheckGlobal(now)
}

// CheckGlobal reports whether the global budget has a failure left now,
// and when it has not, how long until it has one. A caller that holds
// proof no guessing botnet has (a signature by a paired device's key) may
// skip it and call CheckAddress alone, so the owner's devices still
// connect while the budget is spent.
func (l *RateLimiter) CheckGlobal(now time.Time) (allowed bool, retryAfter time.Duration) {
	if l.cfg.GlobalMaxFailures < 0 {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.refill(now)
	if t >= 1 {
		return true, 0
	}
	per := l.cfg.Window / time.Duration(l.cfg.GlobalMaxFailures)
	return false, max(time.Duration((1-t)*float64(per)), time.Millisecond)
}

// refill brings the global bucket to now and returns its tokens; called
// with l.mu held.
func (l *RateLimiter) refill(now time.Time) float64 {
	full := float64(l.cfg.GlobalMaxFailures)
	if l.tokensAt.IsZero() {
		l.tokens, l.tokensAt = full, now
		return l.tokens
	}
	if el := now.Sub(l.tokensAt); el > 0 {
		l.tokens = min(full, l.tokens+full*float64(el)/float64(l.cfg.Window))
		l.tokensAt = now
	}
	return l.tokens
}

// CheckAddress reports whether ip may attempt to authenticate in scope
// now by its own lockout alone, and when it may not, how long until the
// lockout ends.
func (l *RateLimiter) CheckAddress(ip, scope string, now time.Time) (allowed bool, retryAfter time.Duration) {
	key, exempt := l.key(ip, scope)
	if exempt {
		return true, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sweep(now)
	el, ok := l.entries[key]
	if !ok {
		return true, 0
	}
	e := el.Value.(*limitEntry)
	if e.locked(now) {
		return false, e.lockedUntil.Sub(now)
	}
	if !e.lockedUntil.IsZero() { // lockout over: start afresh
		e.lockedUntil = time.Time{}
		e.failures = nil
	}
	l.slide(e, now)
	return len(e.failures) < l.cfg.MaxAttempts, 0
}

// Failure records a failed attempt by ip in scope; the MaxAttempts-th
// failure inside Window starts a lockout. Failures during a lockout do not
// extend it. Every failure also takes a token from the global budget.
func (l *RateLimiter) Failure(ip, scope string, now time.Time) {
	key, exempt := l.key(ip, scope)
	if exempt {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cfg.GlobalMaxFailures > 0 {
		l.tokens = max(0, l.refill(now)-1)
	}
	l.sweep(now)
	var e *limitEntry
	if el, ok := l.entries[key]; ok {
		e = el.Value.(*limitEntry)
	} else {
		e = &limitEntry{key: key}
		el := l.order.PushBack(e)
		l.entries[key] = el
		l.evict(now, el)
	}
	if e.locked(now) {
		return
	}
	if !e.lockedUntil.IsZero() {
		e.lockedUntil = time.Time{}
		e.failures = nil
	}
	l.slide(e, now)
	e.failures = append(e.failures, now)
	if len(e.failures) >= l.cfg.MaxAttempts {
		e.lockedUntil = now.Add(l.cfg.Lockout)
	}
}

// Success forgets ip's failures in scope, ending any lockout; call it after
// a successful authentication.
func (l *RateLimiter) Success(ip, scope string) {
	key, _ := l.key(ip, scope)
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.entries[key]; ok {
		l.order.Remove(el)
		delete(l.entries, key)
	}
}

// Len returns how many (address, scope) pairs are tracked.
func (l *RateLimiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

// key builds the map key and reports whether ip is exempt.
func (l *RateLimiter) key(ip, scope string) (string, bool) {
	scope = strings.TrimSpace(scope)
	if scope == "" {
		scope = ScopeDefault
	}
	addr, parsed := normalizeIP(ip)
	return scope + ":" + addr, l.cfg.ExemptLoopback && parsed.IsValid() && parsed.IsLoopback()
}

// normalizeIP canonicalizes an address so every spelling of one client
// shares a counter: brackets and zones are dropped and IPv4-mapped IPv6
// becomes IPv4. Unparsable input is kept (lowercased) as its own key.
func normalizeIP(ip string) (string, netip.Addr) {
	s := strings.TrimSpace(ip)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	addr, err := netip.ParseAddr(s)
	if err != nil {
		if s == "" {
			return "unknown", netip.Addr{}
		}
		return strings.ToLower(s), netip.Addr{}
	}
	addr = addr.Unmap().WithZone("")
	return addr.String(), addr
}

// slide drops failures that left the window.
func (l *RateLimiter) slide(e *limitEntry, now time.Time) {
	cutoff := now.Add(-l.cfg.Window)
	i := 0
	for i < len(e.failures) && !e.failures[i].After(cutoff) {
		i++
	}
	e.failures = e.failures[i:]
}

// sweep prunes entries with no lockout and no failures left in the window,
// at most once per window, so the cost is amortized over all calls.
func (l *RateLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < l.cfg.Window {
		return
	}
	l.lastSweep = now
	for el := l.order.Front(); el != nil; {
		next := el.Next()
		e := el.Value.(*limitEntry)
		if !e.locked(now) {
			l.slide(e, now)
			if len(e.failures) == 0 {
				l.order.Remove(el)
				delete(l.entries, e.key)
			}
		}
		el = next
	}
}

// evict enforces MaxEntries, never removing keep (the entry just added):
// the oldest entry that is not locked out goes first, so an attacker cannot
// free its own lockout by flooding new addresses; if every other entry is
// locked, the oldest goes anyway to keep memory bounded.
func (l *RateLimiter) evict(now time.Time, keep *list.Element) {
	for len(l.entries) > l.cfg.MaxEntries {
		var victim *list.Element
		for el := l.order.Front(); el != nil; el = el.Next() {
			if el != keep && !el.Value.(*limitEntry).locked(now) {
				victim = el
				break
			}
		}
		if victim == nil {
			victim = l.order.Front()
			if victim == keep {
				victim = victim.Next()
			}
		}
		l.order.Remove(victim)
		delete(l.entries, victim.Value.(*limitEntry).key)
	}
}
