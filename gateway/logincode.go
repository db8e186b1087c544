package gateway

import (
	"crypto/rand"
	"encoding/base32"
	"sync"
	"time"

	"github.com/switchboardhq/switchboard/gateway/auth"
)

// Bounds of one-time sign-in codes: how long one stays good and how many
// can wait unused at once (minting more drops the oldest).
const (
	LoginCodeTTL   = 15 * time.Minute
	maxLoginCodes  = 8
	loginCodeBytes = 20
)

// loginCodes holds the one-time sign-in codes the daemon printed: a code
// is spent by the first connect that presents it (as auth.bootstrapToken)
// with a valid device identity, and is worth nothing after that or after
// LoginCodeTTL. The codes live in memory only; a restart forgets them.
// Safe for concurrent use.
type loginCodes struct {
	mu    sync.Mutex
	codes []loginCode // oldest first
}

type loginCode struct {
	code    string
	expires time.Time
}

// mint returns a new code good until now+ttl.
func (l *loginCodes) mint(now time.Time, ttl time.Duration) (string, error) {
	b := make([]byte, loginCodeBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	code := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropExpired(now)
	if len(l.codes) >= maxLoginCodes {
		l.codes = l.codes[1:]
	}
	l.codes = append(l.codes, loginCode{code: code, expires: now.Add(ttl)})
	return code, nil
}

// spend reports whether code is a live code, and spends it.
func (l *loginCodes) spend(code string, now time.Time) bool {
	if code == "" {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dropExpired(now)
	for i, c := range l.codes {
		if auth.Equal(c.code, code) {
			l.codes = append(l.codes[:i], l.codes[i+1:]...)
			return true
		}
	}
	return false
}

func (l *loginCodes) dropExpired(now time.Time) {
	kept := l.codes[:0]
	for _, c := range l.codes {
		if now.Before(c.expires) {
			kept = append(kept, c)
		}
	}
	l.codes = kept
}

// LoginCode mints a one-time sign-in code for the web chat page, good for
// LoginCodeTTL or until a browser with a device identity on this machine
// (a direct loopback connect) connects with it once (as
// auth.bootstrapToken; the page takes it from a "#login=" URL fragment,
// which browsers never send to a server). That connect counts as the
// token holder's: the device is paired and gets a device token, so the
// browser needs neither the gateway token nor an approval. From elsewhere
// the code is refused and stays unspent: it appears in the daemon's log,
// which may travel. Safe for concurrent use; no IO.
func (s *Server) LoginCode() (string, error) {
	return s.logins.mint(s.now(), LoginCodeTTL)
}
