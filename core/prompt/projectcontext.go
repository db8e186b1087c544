package prompt

import (
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"
)

// writeProjectContext writes "# Project Context" and the workspace files
// that exist (OpenClaw's context files section). Files that cannot be read
// are skipped: the prompt must not depend on transient errors, and a
// missing SOUL.md is normal.
func writeProjectContext(b *strings.Builder, opts SystemOptions) {
	names := opts.Files
	if names == nil {
		names = DefaultContextFiles()
	}
	limit := opts.MaxFileChars
	if limit <= 0 {
		limit = DefaultMaxFileChars
	}
	type file struct{ name, content string }
	var files []file
	for _, name := range names {
		data, err := fs.ReadFile(opts.Workspace, name)
		if err != nil {
			continue
		}
		content := strings.TrimRight(string(data), " \t\r\n")
		if strings.TrimSpace(content) == "" {
			continue
		}
		files = append(files, file{name, truncateContextFile(content, name, limit)})
	}
	if len(files) == 0 {
		return
	}
	b.WriteString("\n\n# Project Context\n\nThe following project context files have been loaded:")
	for _, f := range files {
		if f.name == "SOUL.md" {
			b.WriteString("\nIf SOUL.md is present, embody its persona and tone. Avoid stiff, generic replies; follow its guidance unless higher-priority instructions override it.")
			break
		}
	}
	for _, f := range files {
		b.WriteString("\n\n## ")
		b.WriteString(f.name)
		b.WriteString("\n\n")
		b.WriteString(f.content)
	}
}

// truncateContextFile keeps the first 70% and the last 20% of a file longer
// than limit characters, with OpenClaw's visible marker between them
// (src/agents/pi-embedded-helpers/bootstrap.ts): a blank line,
// "[...truncated, read <name> for full content...]",
// "…(truncated <name>: kept <head>+<tail> chars of <total>)…", a blank line.
func truncateContextFile(content, name string, limit int) string {
	total := utf8.RuneCountInString(content)
	if total <= limit {
		return content
	}
	headChars := limit * 7 / 10
	tailChars := limit * 2 / 10
	head := content[:runeOffset(content, headChars)]
	tail := content[runeOffset(content, total-tailChars):]
	marker := "\n[...truncated, read " + name + " for full content...]\n" +
		"…(truncated " + name + ": kept " + strconv.Itoa(headChars) + "+" + strconv.Itoa(tailChars) +
		" chars of " + strconv.Itoa(total) + ")…\n"
	return head + "\n" + marker + "\n" + tail
}

// runeOffset returns the byte offset of the n-th rune of s.
func runeOffset(s string, n int) int {
	if n <= 0 {
		return 0
	}
	i := 0
	for off := range s {
		if i == n {
			return off
		}
		i++
	}
	return len(s)
}
