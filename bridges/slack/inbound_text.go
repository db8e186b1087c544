package slack

import "strings"

// entities undoes the only escaping Slack applies to message text; one
// pass, so "&amp;lt;" becomes "&lt;" and not "<".
var entities = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")

// inboundText turns the text of a Slack message into plain text for the
// model: the bot's own mention (<@botID>) is dropped, the other
// angle-bracket tokens become what a reader sees (<@U1|ada> → @ada,
// <#C1|general> → #general, <!here> → @here, <https://x|docs> →
// docs (https://x), <mailto:a@b|a@b> → a@b), then the HTML entities Slack
// escapes <, > and & with are decoded. A "<" without its ">" is kept as
// is. botID may be empty.
func inboundText(text, botID string) string {
	var out strings.Builder
	out.Grow(len(text))
	for {
		open := strings.IndexByte(text, '<')
		if open < 0 {
			out.WriteString(text)
			break
		}
		end := strings.IndexAny(text[open+1:], "<>")
		if end < 0 || text[open+1+end] == '<' {
			// Not a token: keep the "<" and look again after it.
			out.WriteString(text[:open+1])
			text = text[open+1:]
			continue
		}
		out.WriteString(text[:open])
		out.WriteString(token(text[open+1:open+1+end], botID))
		text = text[open+1+end+1:]
	}
	return strings.TrimSpace(entities.Replace(out.String()))
}

// token renders the inside of one <…> token.
func token(t, botID string) string {
	target, label, _ := strings.Cut(t, "|")
	switch {
	case strings.HasPrefix(target, "@"):
		if botID != "" && target[1:] == botID {
			return ""
		}
		return "@" + strings.TrimPrefix(orLabel(label, target[1:]), "@")
	case strings.HasPrefix(target, "#"):
		return "#" + strings.TrimPrefix(orLabel(label, target[1:]), "#")
	case strings.HasPrefix(target, "!"):
		// <!here>, <!channel>, <!everyone>, <!subteam^S1|@team>,
		// <!date^…|fallback>.
		if label != "" {
			return label
		}
		name, _, _ := strings.Cut(target[1:], "^")
		return "@" + name
	case strings.HasPrefix(target, "mailto:"), strings.HasPrefix(target, "tel:"):
		_, addr, _ := strings.Cut(target, ":")
		return orLabel(label, addr)
	}
	if label == "" || label == target || strings.TrimPrefix(strings.TrimPrefix(target, "https://"), "http://") == label {
		return target
	}
	return label + " (" + target + ")"
}

func orLabel(label, fallback string) string {
	if label != "" {
		return label
	}
	return fallback
}
