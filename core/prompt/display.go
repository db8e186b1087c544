package prompt

import "strings"

// StripForDisplay removes from a user prompt what Body added around the
// user's own words, for showing the message back to a person (OpenClaw's
// strip-inbound-meta.ts): every untrusted metadata block (a label of
// UntrustedLabels on its own line, then a ```json fenced value) and the
// untrusted context section (UntrustedContextHeader to the end). Other
// text is kept as it is; a prompt without such parts comes back
// unchanged.
func StripForDisplay(text string) string {
	if !strings.Contains(text, "(untrusted") && !strings.Contains(text, UntrustedContextHeader) {
		return text
	}
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	labels := UntrustedLabels()
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == UntrustedContextHeader {
			break // the untrusted context runs to the end
		}
		if isLabel(line, labels) && i+1 < len(lines) && lines[i+1] == "```json" {
			end := i + 2
			for end < len(lines) && lines[end] != "```" {
				end++
			}
			if end < len(lines) {
				i = end
				// The blank line that separated the block from what follows.
				if i+1 < len(lines) && lines[i+1] == "" {
					i++
				}
				continue
			}
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

func isLabel(line string, labels []string) bool {
	for _, l := range labels {
		if line == l {
			return true
		}
	}
	return false
}
