package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/switchboardhq/switchboard/bridges"
)

// WebhookOptions switch the bridge from long polling to a webhook:
// Telegram POSTs each update to URL, which must reach Listen (usually
// through a TLS-terminating reverse proxy).
type WebhookOptions struct {
	// URL is the public https URL Telegram posts to.
	URL string
	// Secret is sent by Telegram in X-Telegram-Bot-Api-Secret-Token with
	// every update; requests without it are refused. 1–256 characters of
	// A–Z, a–z, 0–9, _ and -.
	Secret string
	// Listen is the local address to serve on, e.g. "127.0.0.1:8787";
	// empty means the bridge serves nothing itself and the embedding
	// program mounts it (bridges.WebhookHandler).
	Listen string
	// Path is the path served; empty means DefaultWebhookPath.
	Path string
}

// DefaultWebhookPath is where the bridge receives updates.
const DefaultWebhookPath = "/telegram-webhook"

// maxWebhookBody caps one update's JSON.
const maxWebhookBody = 1 << 20

// validSecret reports 1 to 256 characters of A-Z, a-z, 0-9, _ and -, the
// secret_token Telegram accepts. (As a regexp, {1,256} compiled into a
// 256-fold program at package init: 1 ms and 240 KB of every start.)
func validSecret(s string) bool {
	if len(s) < 1 || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// validate checks the webhook settings.
func (w *WebhookOptions) validate() error {
	if w.URL == "" {
		return errors.New("telegram: webhook.url is required in webhook mode (the public https URL Telegram posts to)")
	}
	if !validSecret(w.Secret) {
		return errors.New("telegram: webhook.secret must be 1 to 256 characters of A-Z, a-z, 0-9, _ and - (Telegram sends it with every update)")
	}
	if w.Path == "" {
		w.Path = DefaultWebhookPath
	}
	return nil
}

var _ bridges.WebhookHandler = (*Bridge)(nil)

// WebhookPath implements bridges.WebhookHandler.
func (b *Bridge) WebhookPath() string {
	if b.opts.Webhook == nil {
		return DefaultWebhookPath
	}
	return b.opts.Webhook.Path
}

// ServeHTTP implements bridges.WebhookHandler: it checks the secret
// header, hands the update to the sink, and answers 200 only once the sink
// has accepted it (an error answers 500, and Telegram delivers again).
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST updates here", http.StatusMethodNotAllowed)
		return
	}
	if b.opts.Webhook == nil || subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Telegram-Bot-Api-Secret-Token")), []byte(b.opts.Webhook.Secret)) != 1 {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	b.mu.Lock()
	sink, norm := b.sink, b.norm
	b.mu.Unlock()
	if sink == nil {
		http.Error(w, "the bridge is starting", http.StatusServiceUnavailable)
		return
	}
	var upd models.Update
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWebhookBody+1))
	if err != nil || len(body) > maxWebhookBody || json.Unmarshal(body, &upd) != nil {
		http.Error(w, "the body is not a Telegram update", http.StatusBadRequest)
		return
	}
	msg, why, ok := norm.normalize(&upd)
	if !ok {
		b.opts.Log.Debug("telegram: update not answered", "update", upd.ID, "why", why)
		w.WriteHeader(http.StatusOK)
		return
	}
	b.fetchMedia(r.Context(), upd.Message, msg.Message)
	if err := sink.Submit(r.Context(), msg); err != nil {
		b.opts.Log.Warn("telegram: webhook update not accepted; Telegram will retry", "err", err)
		http.Error(w, "not accepted, retry", http.StatusInternalServerError)
		return
	}
	b.tracker.Inbound()
	w.WriteHeader(http.StatusOK)
}

// runWebhook registers the webhook with Telegram (retrying with backoff),
// serves Listen until ctx ends, and then stops serving. The webhook stays
// registered, so Telegram keeps updates for the next start.
func (b *Bridge) runWebhook(ctx context.Context, sink bridges.Sink) error {
	wh := b.opts.Webhook
	var ln net.Listener
	if wh.Listen != "" {
		var lc net.ListenConfig
		l, err := lc.Listen(ctx, "tcp", wh.Listen)
		if err != nil {
			err = fmt.Errorf("telegram: webhook.listen %s: %w", wh.Listen, err)
			b.setState(sink, bridges.StateTransientDisconnect, err)
			return err
		}
		ln = l
	}
	var srv *http.Server
	served := make(chan struct{})
	if ln != nil {
		mux := http.NewServeMux()
		mux.Handle(wh.Path, b)
		srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go func() { defer close(served); _ = srv.Serve(ln) }()
	} else {
		close(served)
	}
	defer func() {
		if srv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}
		<-served
	}()

	for attempt := 0; ctx.Err() == nil; attempt++ {
		_, err := b.api.SetWebhook(ctx, &bot.SetWebhookParams{URL: wh.URL, SecretToken: wh.Secret, AllowedUpdates: allowedUpdates})
		if err == nil {
			b.setState(sink, bridges.StateConnected, nil)
			<-ctx.Done()
			return nil
		}
		err = b.redact(err)
		kind, retryAfter := classify(err)
		if kind == kindBadToken {
			err = fmt.Errorf("telegram refused the bot token (%w); check channels.telegram.botToken", err)
			b.setState(sink, bridges.StateBadCredentials, err)
			return err
		}
		delay := b.opts.Backoff.Delay(attempt)
		err = fmt.Errorf("setWebhook: %w", err)
		if kind == kindRateLimited {
			delay = retryAfter
			err = bridges.Summarized(err, "rate limited by Telegram")
		}
		b.setState(sink, bridges.StateTransientDisconnect, bridges.RetryIn(err, delay))
		if !bridges.Sleep(ctx, delay) {
			break
		}
	}
	return nil
}
