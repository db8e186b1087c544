package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
)

// allowedUpdates are the update kinds the bridge asks for.
var allowedUpdates = []string{"message", "edited_message", "channel_post", "my_chat_member"}

// apiReply is the Bot API's envelope.
type apiReply struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// getUpdates long-polls for updates from offset. The bridge polls itself
// rather than with bot.Start, because the library confirms updates to
// Telegram (by asking for the next offset) before its handlers finish;
// here the offset moves only after the sink has journaled each update.
// Errors are the library's (bot.ErrorConflict, *bot.TooManyRequestsError,
// bot.ErrorUnauthorized...), with the token removed from any URL.
func (b *Bridge) getUpdates(ctx context.Context, offset int64) ([]*models.Update, error) {
	body, _ := json.Marshal(map[string]any{
		"offset": offset, "timeout": int(b.opts.PollTimeout / time.Second), "allowed_updates": allowedUpdates,
	})
	ctx, cancel := context.WithTimeout(ctx, b.opts.PollTimeout+15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.methodURL("getUpdates"), bytes.NewReader(body))
	if err != nil {
		return nil, b.redact(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, b.redact(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, b.redact(err)
	}
	var r apiReply
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("getUpdates: HTTP %d with a body that is not Bot API JSON (is apiUrl a Bot API server?)", resp.StatusCode)
	}
	if !r.OK {
		return nil, apiError(r)
	}
	var updates []*models.Update
	if err := json.Unmarshal(r.Result, &updates); err != nil {
		return nil, fmt.Errorf("getUpdates: result is not a list of updates: %w", err)
	}
	return updates, nil
}

// apiError maps a Bot API error to the library's errors.
func apiError(r apiReply) error {
	switch r.ErrorCode {
	case http.StatusTooManyRequests:
		return &bot.TooManyRequestsError{Message: "too many requests, " + r.Description, RetryAfter: r.Parameters.RetryAfter}
	case http.StatusConflict:
		return fmt.Errorf("%w, %s", bot.ErrorConflict, r.Description)
	case http.StatusUnauthorized:
		return fmt.Errorf("%w, %s", bot.ErrorUnauthorized, r.Description)
	case http.StatusNotFound:
		return fmt.Errorf("%w, %s", bot.ErrorNotFound, r.Description)
	case http.StatusForbidden:
		return fmt.Errorf("%w, %s", bot.ErrorForbidden, r.Description)
	case http.StatusBadRequest:
		return fmt.Errorf("%w, %s", bot.ErrorBadRequest, r.Description)
	}
	return fmt.Errorf("telegram error %d: %s", r.ErrorCode, r.Description)
}

// methodURL is the Bot API URL of a method. It holds the token: never log
// it or put it in an error (redact).
func (b *Bridge) methodURL(method string) string {
	return strings.TrimRight(b.opts.APIURL, "/") + "/bot" + b.opts.Token + "/" + method
}

// redact removes the token from an error's text.
func (b *Bridge) redact(err error) error {
	if err == nil || b.opts.Token == "" || !strings.Contains(err.Error(), b.opts.Token) {
		return err
	}
	return redactedError{msg: strings.ReplaceAll(err.Error(), b.opts.Token, "<token>"), err: err}
}

// redactedError keeps the wrapped error for errors.Is while printing a
// text without the token.
type redactedError struct {
	msg string
	err error
}

func (e redactedError) Error() string { return e.msg }
func (e redactedError) Unwrap() error { return e.err }

// errorKind classifies a Bot API or network error.
type errorKind int

const (
	kindTransient   errorKind = iota // network, 5xx: back off and retry
	kindConflict                     // 409: another poller or a webhook
	kindRateLimited                  // 429: wait retry_after
	kindBadToken                     // 401/404 on getMe/getUpdates: terminal
)

func classify(err error) (errorKind, time.Duration) {
	var tm *bot.TooManyRequestsError
	switch {
	case errors.As(err, &tm):
		return kindRateLimited, time.Duration(max(tm.RetryAfter, 1)) * time.Second
	case errors.Is(err, bot.ErrorConflict):
		return kindConflict, 0
	case errors.Is(err, bot.ErrorUnauthorized), errors.Is(err, bot.ErrorNotFound):
		return kindBadToken, 0
	}
	return kindTransient, 0
}
