package bridges

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
)

// Mentions matches configured mention patterns (messages.groupChat.
// mentionPatterns): case-insensitive regular expressions that count as
// addressing the bot in a group, besides the platform's own mentions.
// The zero value matches nothing.
type Mentions struct {
	patterns []*regexp.Regexp
}

// maxPatternLen bounds one pattern.
const maxPatternLen = 200

// NewMentions compiles patterns. A pattern that does not compile, is too
// long, or nests repetition (such as (a+)+, which OpenClaw refuses as
// unsafe) is an error naming it.
func NewMentions(patterns []string) (Mentions, error) {
	var m Mentions
	for _, p := range patterns {
		if strings.TrimSpace(p) == "" {
			continue
		}
		if len(p) > maxPatternLen {
			return Mentions{}, fmt.Errorf("mention pattern %.20q… is longer than %d characters", p, maxPatternLen)
		}
		re, err := syntax.Parse(p, syntax.Perl)
		if err != nil {
			return Mentions{}, fmt.Errorf("mention pattern %q: %w", p, err)
		}
		if nestedRepeat(re, false) {
			return Mentions{}, fmt.Errorf("mention pattern %q nests repetition (like (a+)+); write it without the nesting", p)
		}
		c, err := regexp.Compile("(?i)" + p)
		if err != nil {
			return Mentions{}, fmt.Errorf("mention pattern %q: %w", p, err)
		}
		m.patterns = append(m.patterns, c)
	}
	return m, nil
}

// nestedRepeat reports a repetition inside another repetition.
func nestedRepeat(re *syntax.Regexp, inRepeat bool) bool {
	repeat := re.Op == syntax.OpStar || re.Op == syntax.OpPlus || re.Op == syntax.OpRepeat && (re.Max == -1 || re.Max > 1)
	if repeat && inRepeat {
		return true
	}
	for _, sub := range re.Sub {
		if nestedRepeat(sub, inRepeat || repeat) {
			return true
		}
	}
	return false
}

// Configured reports whether any pattern is set (mention gating can then
// apply even where the platform has no native mentions).
func (m Mentions) Configured() bool { return len(m.patterns) > 0 }

// Match reports whether text addresses the bot by a pattern.
func (m Mentions) Match(text string) bool {
	for _, re := range m.patterns {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}
