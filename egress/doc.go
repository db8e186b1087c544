// Package egress is the only way Switchboard makes an HTTP request to a URL
// that a model, a user or a remote message chose: web pages for web_fetch,
// media links, cron webhooks. Such a URL is hostile until proven otherwise,
// so a Client applies its address policy to what is actually dialled (every
// resolved address, then the socket's address again in net.Dialer.Control)
// rather than to the URL string, checks every redirect hop the same way,
// uses no proxy, and caps each response in time and size
// (reliability-security.md §1.2.E, matrix row 13).
//
// The rule: code outside this package never calls http.Get, http.Post,
// http.Head or http.PostForm and never touches http.DefaultClient or
// http.DefaultTransport; lint_test.go enforces it over the module. A library
// that wants an *http.Client for such URLs gets Client.HTTPClient, which
// carries the same policy. Clients for fixed platform APIs (Telegram, Slack,
// Discord, LLM providers) are configured by the operator, not the model, and
// are listed with a reason in lint_test.go.
//
// The package imports nothing from this module, so every package may use it.
package egress
