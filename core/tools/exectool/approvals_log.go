package exectool

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// logCommandMax is how many bytes of a command the daemon's log shows. The
// whole command is in the request the page and the panel show; the log line
// only has to say which request it is.
const logCommandMax = 120

// authScheme matches an HTTP authorization scheme and its credentials.
var authScheme = regexp.MustCompile(`(?i)\b(bearer|basic|digest)\s+[^\s'"]+`)

// secretAssignment matches a word naming a credential followed by its
// value: token=…, --password …, Authorization: …, api_key:….
var secretAssignment = regexp.MustCompile(`(?i)((?:token|secret|passw(?:or)?d|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth(?:orization)?|cookie|session[_-]?id)['"]?(?:\s*[=:]\s*|\s+)['"]?)[^\s'"]+`)

// urlUserinfo matches the password of a URL's user information.
var urlUserinfo = regexp.MustCompile(`(//[^/\s:@'"]+:)[^/\s@'"]+@`)

// opaqueWord matches a long run of token characters: an API key, a JWT
// segment, a hex secret.
var opaqueWord = regexp.MustCompile(`[A-Za-z0-9_+=-]{24,}`)

// logCommand is cmd as the daemon's log shows it: words that look like
// credentials masked, then cut to logCommandMax bytes on a character
// boundary with the full length said. The log is read by more people than
// the approver; the approver sees the whole command in the page.
func logCommand(cmd string) string {
	s := authScheme.ReplaceAllString(cmd, "$1 ***")
	s = secretAssignment.ReplaceAllString(s, "${1}***")
	s = urlUserinfo.ReplaceAllString(s, "${1}***@")
	s = opaqueWord.ReplaceAllStringFunc(s, func(w string) string {
		if strings.ContainsAny(w, "0123456789") && strings.IndexFunc(w, isLetter) >= 0 {
			return "***"
		}
		return w
	})
	if len(s) <= logCommandMax {
		return s
	}
	cut := logCommandMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// logRequested says in the daemon's log that req waits for an operator,
// and where to answer it (issue 26, finding 4: nothing said so, and the
// request was denied unseen after 120 s).
func (a *Approvals) logRequested(req ApprovalRequest, timeout time.Duration) {
	if a.Logger == nil {
		return
	}
	d := req.Request
	attrs := []slog.Attr{slog.String("id", req.ID)}
	if d.SessionKey != "" {
		attrs = append(attrs, slog.String("session", d.SessionKey))
	}
	attrs = append(attrs,
		slog.String("command", logCommand(d.Command)),
		slog.Int("commandBytes", len(d.Command)),
		slog.String("expires", time.UnixMilli(req.ExpiresAtMs).Format("15:04:05")),
		slog.Duration("timeout", timeout),
	)
	answer := "approve or deny it in the web chat or any gateway client with the operator.approvals scope (exec.approval.resolve)"
	if a.AnswerAt != "" {
		answer = "approve or deny it " + a.AnswerAt
	}
	attrs = append(attrs, slog.String("answer", answer))
	a.Logger.LogAttrs(context.Background(), slog.LevelInfo,
		"command waiting for an operator's approval; no answer before it expires is a denial", attrs...)
}

// logResolved says how req ended: answered (INFO), expired unanswered
// (WARN: the model was told no) or withdrawn with its run (INFO).
func (a *Approvals) logResolved(req ApprovalRequest, r ApprovalResolved) {
	if a.Logger == nil {
		return
	}
	attrs := []slog.Attr{slog.String("id", r.ID)}
	if s := req.Request.SessionKey; s != "" {
		attrs = append(attrs, slog.String("session", s))
	}
	waited := time.Duration(r.Ts-req.CreatedAtMs) * time.Millisecond
	switch r.Reason {
	case "timeout":
		attrs = append(attrs, slog.String("command", logCommand(req.Request.Command)), slog.Duration("waited", waited))
		a.Logger.LogAttrs(context.Background(), slog.LevelWarn, "approval expired: nobody answered in time, so the command was denied", attrs...)
	case "aborted":
		a.Logger.LogAttrs(context.Background(), slog.LevelInfo, "approval withdrawn: the run ended before an answer", attrs...)
	default:
		attrs = append(attrs, slog.String("decision", string(r.Decision)))
		if r.ResolvedBy != "" {
			attrs = append(attrs, slog.String("by", r.ResolvedBy))
		}
		attrs = append(attrs, slog.Duration("waited", waited))
		a.Logger.LogAttrs(context.Background(), slog.LevelInfo, "approval answered", attrs...)
	}
}
