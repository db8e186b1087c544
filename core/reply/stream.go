package reply

import "strings"

// StreamFilter holds back the start of a streamed reply while it may still
// turn out to be SilentToken, so a chat preview never flashes "NO_REPLY"
// (openclaw-facts §5.2, streaming suppression). Feed it the deltas in order
// with Push and show what it returns; call Finish when the stream ends.
//
// Text is held while everything so far (after leading white space) is
// SilentToken itself or a prefix the model may be spelling out ("N", "NO",
// "NO_RE"; see IsSilentPrefix). As soon as the text can no longer be
// silent, all of it is released; if the model glued the token to its reply
// ("NO_REPLYHello"), the token is dropped. A trailing token is not held
// back: the final reply (Build) removes it.
//
// The zero value is ready to use. A StreamFilter is not safe for
// concurrent use.
type StreamFilter struct {
	all     strings.Builder // every delta
	held    strings.Builder
	visible strings.Builder
	decided bool
}

// Push adds a delta and returns the text that may now be shown, possibly
// "".
func (f *StreamFilter) Push(delta string) string {
	f.all.WriteString(delta)
	if f.decided {
		f.visible.WriteString(delta)
		return delta
	}
	f.held.WriteString(delta)
	acc := f.held.String()
	t := jsTrimStart(acc)
	switch {
	case t == "", t == "N", IsSilent(acc), IsSilentPrefix(t), isSilentLead(t):
		// A lone "N" is held too: the next delta decides.
		return ""
	case startsWithGluedToken(acc):
		return f.release(stripLeadingTokens(acc))
	}
	return f.release(acc)
}

// isSilentLead reports text that is one or more SilentTokens followed by
// white space, which may still be glued to more tokens or be the whole
// reply.
func isSilentLead(t string) bool {
	rest := t
	for hasPrefixFold(rest, SilentToken) {
		rest = jsTrimStart(rest[len(SilentToken):])
	}
	return rest == "" && t != ""
}

func (f *StreamFilter) release(s string) string {
	f.decided = true
	f.held.Reset()
	f.visible.WriteString(s)
	return s
}

// Finish ends the stream and returns held text that turned out not to be
// silent. silent reports that the whole reply was SilentToken (or only a
// fragment of it), so nothing should be sent; if some of it was already
// shown (a lower-case "no_reply" is not held back), the preview should be
// withdrawn.
func (f *StreamFilter) Finish() (rest string, silent bool) {
	if f.decided {
		return "", IsSilent(f.all.String())
	}
	acc := f.held.String()
	t := jsTrim(acc)
	if t == "" || IsSilent(acc) || IsSilentPrefix(t) || isSilentLead(t) {
		return "", true
	}
	return f.release(acc), false
}

// Visible returns all the text released so far.
func (f *StreamFilter) Visible() string { return f.visible.String() }

// Holding reports that text is being held back.
func (f *StreamFilter) Holding() bool { return !f.decided && f.held.Len() > 0 }
