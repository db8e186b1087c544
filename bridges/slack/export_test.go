package slack

import "time"

// SetHTTPBudget sets how long one Events API request may take before it
// is answered 500, so a test need not wait Slack's real 2.5 s.
func (b *Bridge) SetHTTPBudget(d time.Duration) { b.httpBudget = d }
