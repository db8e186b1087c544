package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/slack-go/slack/slackevents"
	"github.com/switchboardhq/switchboard/bridges"
)

// HTTPOptions switch the bridge from Socket Mode to the Events API over
// HTTP: Slack POSTs each event, signed with the app's signing secret.
type HTTPOptions struct {
	// SigningSecret verifies every request (VerifySignature).
	SigningSecret string
	// Listen is the local address to serve on, behind your TLS proxy;
	// empty means the embedding program mounts the bridge itself
	// (bridges.WebhookHandler).
	Listen string
	// Path is the path served; empty means DefaultEventsPath.
	Path string
}

// DefaultEventsPath is where the bridge receives Events API requests.
const DefaultEventsPath = "/slack/events"

// defaultHTTPBudget bounds the handling of one Events API request (file
// downloads and the journal's Submit), so the answer beats Slack's 3 s
// timeout; past it the request is answered 500 and Slack's retry, with the
// same event_id, is deduplicated if the first attempt got through after
// all.
const defaultHTTPBudget = 2500 * time.Millisecond

// maxEventBody caps one request's body.
const maxEventBody = 1 << 20

var _ bridges.WebhookHandler = (*Bridge)(nil)

// WebhookPath implements bridges.WebhookHandler.
func (b *Bridge) WebhookPath() string {
	if b.opts.HTTP == nil || b.opts.HTTP.Path == "" {
		return DefaultEventsPath
	}
	return b.opts.HTTP.Path
}

// ServeHTTP implements bridges.WebhookHandler: the signature is checked
// (401 otherwise), url_verification is answered with its challenge, and an
// event is answered 200 only after the sink took its message (an error, or
// no answer from the sink within the request's budget, answers 500, and
// Slack retries; retries carry the same event_id, the dedupe key, and are
// processed like first attempts, as the first may never have arrived).
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST events here", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxEventBody+1))
	if err != nil || len(body) > maxEventBody {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	if b.opts.HTTP == nil {
		http.Error(w, "the bridge is not in HTTP mode", http.StatusNotFound)
		return
	}
	if err := VerifySignature(r.Header, body, b.opts.HTTP.SigningSecret, b.opts.Now()); err != nil {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	outer, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		http.Error(w, "not an Events API request", http.StatusBadRequest)
		return
	}
	if outer.Type == slackevents.URLVerification {
		var v slackevents.EventsAPIURLVerificationEvent
		if err := json.Unmarshal(body, &v); err != nil {
			http.Error(w, "bad url_verification", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, v.Challenge)
		return
	}
	b.mu.Lock()
	sink := b.sink
	b.mu.Unlock()
	if sink == nil {
		http.Error(w, "the bridge is starting", http.StatusServiceUnavailable)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), b.httpBudget)
	defer cancel()
	if err := b.handle(ctx, sink, outer); err != nil {
		b.opts.Log.Warn("slack: event not accepted; Slack will retry", "err", b.redact(err))
		http.Error(w, "not accepted, retry", http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// eventServer serves the Events API path on HTTPOptions.Listen.
type eventServer struct {
	addr string
	srv  *http.Server
	done chan struct{} // closed when Serve has returned
	err  error         // what Serve returned; read after done
}

// listen binds HTTPOptions.Listen and serves the events path there at
// once; until Start has the bot's identity, ServeHTTP answers 503 and
// Slack retries.
func (b *Bridge) listen(ctx context.Context) (*eventServer, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", b.opts.HTTP.Listen)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle(b.WebhookPath(), b)
	es := &eventServer{addr: b.opts.HTTP.Listen, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(es.done)
		es.err = es.srv.Serve(ln)
	}()
	return es, nil
}

// stop shuts the server down, giving requests in flight a few seconds.
func (es *eventServer) stop() {
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = es.srv.Shutdown(sctx)
	<-es.done
}

// serveHTTP receives events over HTTP until ctx ends: on es, or, when
// es is nil (no Listen), through the handler the embedding program
// mounted. Serve returns early only when the listener itself breaks (it
// rides out temporary accept errors), which the owner has to look into:
// StateFailed.
func (b *Bridge) serveHTTP(ctx context.Context, sink bridges.Sink, es *eventServer) error {
	b.setState(sink, bridges.StateConnected, nil)
	if es == nil {
		<-ctx.Done()
		return nil
	}
	select {
	case <-ctx.Done():
		return nil
	case <-es.done:
		err := fmt.Errorf("slack: the events listener on %s stopped (%w); check channels.slack.http.listen", es.addr, es.err)
		b.setState(sink, bridges.StateFailed, err)
		return err
	}
}
