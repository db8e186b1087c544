package slack

import "time"

// SetHTTPBudget sets how long one Events API request may take before it
// is answered 500, so a test need not wait Slack's real 2.5 s.
func (b *Bridge) SetHTTPBudget(d time.Duration) { b.httpBudget = d }

// SetAuthTimeout sets how long one auth.test may take, so a test of a
// network that never answers need not wait the default 30 s.
func (b *Bridge) SetAuthTimeout(d time.Duration) { b.authTimeout = d }
