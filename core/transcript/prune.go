package transcript

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/switchboardhq/switchboard/core"
)

// Token estimation follows pi's compaction (estimateTokens): about 4
// characters per token, an image counted as 4800 characters, each message
// rounded up on its own. Characters are Unicode code points.
const (
	charsPerToken  = 4
	imageCharsEst  = 4800
	defaultKeepAst = 3
)

// The defaults of PruneOptions, OpenClaw's context-pruning defaults
// (softTrim.maxChars 4000, headChars 1500, tailChars 1500).
const (
	// DefaultSoftTrimChars is the length above which a tool result is
	// trimmed.
	DefaultSoftTrimChars = 4000
	// DefaultHeadChars is how much of its start a trimmed result keeps.
	DefaultHeadChars = 1500
	// DefaultTailChars is how much of its end a trimmed result keeps.
	DefaultTailChars = 1500
)

// HardClearPlaceholder replaces the text of a tool result that Prune
// clears.
const HardClearPlaceholder = "[compacted: tool output removed to free context]"

// EstimateTokens estimates how many tokens msgs take in a model's context:
// the characters of text, thinking, tool-call names and arguments (as
// JSON), unknown blocks (their JSON) and compaction summaries, 4800 per
// image, divided by 4 and rounded up per message. Messages that are never
// sent (core.RawMessage, nil) count 0. It is a heuristic that tends to
// overestimate; the agent uses it for the compaction threshold, Prune for
// its limits, SplitForCompaction for its budget.
func EstimateTokens(msgs []core.Message) int {
	n := 0
	for _, m := range msgs {
		n += messageTokens(m)
	}
	return n
}

func messageTokens(m core.Message) int {
	return (messageChars(m) + charsPerToken - 1) / charsPerToken
}

func messageChars(m core.Message) int {
	switch v := m.(type) {
	case *core.UserMessage:
		if v == nil {
			return 0
		}
		if v.Content.Blocks == nil {
			return charCount(v.Content.Text)
		}
		return contentChars(v.Content.Blocks)
	case *core.AssistantMessage:
		if v == nil {
			return 0
		}
		return contentChars(v.Content)
	case *core.ToolResultMessage:
		if v == nil {
			return 0
		}
		return contentChars(v.Content)
	case *core.CompactionSummaryMessage:
		if v == nil {
			return 0
		}
		return charCount(v.Summary)
	}
	return 0
}

func contentChars(c core.Content) int {
	n := 0
	for _, b := range c {
		switch v := b.(type) {
		case *core.TextContent:
			if v != nil {
				n += charCount(v.Text)
			}
		case *core.ThinkingContent:
			if v != nil {
				n += charCount(v.Thinking)
			}
		case *core.ImageContent:
			n += imageCharsEst
		case *core.ToolCall:
			if v != nil {
				n += charCount(v.Name) + jsonChars(v.Arguments)
			}
		case *core.RawBlock:
			if v != nil {
				n += utf8.RuneCount(v.JSON)
			}
		}
	}
	return n
}

// jsonChars approximates the length of v's compact JSON without encoding
// it; for the shapes encoding/json decodes into an any it is exact apart
// from escapes.
func jsonChars(v any) int {
	switch v := v.(type) {
	case nil:
		return 4
	case bool:
		if v {
			return 4
		}
		return 5
	case string:
		return charCount(v) + 2
	case float64:
		var b [32]byte
		return len(strconv.AppendFloat(b[:0], v, 'g', -1, 64))
	case map[string]any:
		n := 2 + max(len(v)-1, 0)
		for k, e := range v {
			n += charCount(k) + 3 + jsonChars(e)
		}
		return n
	case []any:
		n := 2 + max(len(v)-1, 0)
		for _, e := range v {
			n += jsonChars(e)
		}
		return n
	}
	b, err := json.Marshal(v)
	if err != nil {
		return 128
	}
	return utf8.RuneCount(b)
}

// charCount returns the number of code points in s, as
// utf8.RuneCountInString does, eight bytes at a time while s is ASCII,
// which is most of what a transcript holds.
func charCount(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if w&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return i + utf8.RuneCountInString(s[i:])
		}
	}
	return len(s)
}

// PruneOptions configures Prune. Zero values select the documented
// defaults; the two limits are off when zero.
type PruneOptions struct {
	// SoftLimitTokens: when EstimateTokens is over it, old tool results are
	// soft-trimmed. 0 (or less) turns pruning off.
	SoftLimitTokens int
	// HardLimitTokens: when the estimate is still over it after trimming,
	// old tool results are cleared, oldest first, until it is not. 0 (or
	// less) turns clearing off.
	HardLimitTokens int
	// SoftTrimChars: a tool result whose text is longer is trimmed to its
	// head and tail. 0 means DefaultSoftTrimChars.
	SoftTrimChars int
	// HeadChars and TailChars are how much a trimmed result keeps of its
	// start and end. 0 means DefaultHeadChars and DefaultTailChars.
	HeadChars, TailChars int
	// KeepLastAssistants protects the tool results from the last this many
	// assistant messages on; when there are fewer assistant messages,
	// nothing is pruned (OpenClaw). 0 means 3; a negative value protects
	// none.
	KeepLastAssistants int
	// MinPrunableToolChars: clearing only happens when the prunable tool
	// results hold at least this many characters, so a small gain does not
	// cost the provider's prompt cache. 0 means no minimum (OpenClaw uses
	// 50000).
	MinPrunableToolChars int
	// IsToolPrunable says whether results of the named tool may be pruned
	// (the seed prunes exec, grep, find and ls output, not memory
	// searches). Nil means every tool.
	IsToolPrunable func(toolName string) bool
}

// Prune shrinks old tool results in the context when it is too large (seed
// 004 "Context Pruning", OpenClaw's context-pruning extension, run before
// every model call). When the estimate is over SoftLimitTokens, each
// prunable tool result whose text is longer than SoftTrimChars becomes its
// first HeadChars and last TailChars characters joined by "\n...\n",
// followed by "\n\n[Tool result trimmed: kept first H chars and last T chars
// of N chars.]" (OpenClaw's exact note). When the estimate is then still
// over HardLimitTokens, prunable results are replaced by
// HardClearPlaceholder, oldest first, until it is not. Never touched:
// messages up to and including the first user message (the bootstrap
// context), tool results from the KeepLastAssistants-th last assistant
// message on, tool results holding an image, and results of tools
// IsToolPrunable refuses. Only the copy is pruned; the transcript keeps
// everything.
func Prune(msgs []core.Message, opts PruneOptions) []core.Message {
	out, _ := prune(msgs, opts)
	return out
}

// pruneStats reports what prune did.
type pruneStats struct {
	trimmed, cleared          int
	tokensBefore, tokensAfter int
}

func prune(msgs []core.Message, opts PruneOptions) ([]core.Message, pruneStats) {
	out := make([]core.Message, len(msgs))
	copy(out, msgs)
	tokens := make([]int, len(msgs))
	total := 0
	for i, m := range msgs {
		tokens[i] = messageTokens(m)
		total += tokens[i]
	}
	st := pruneStats{tokensBefore: total, tokensAfter: total}
	if opts.SoftLimitTokens <= 0 || total <= opts.SoftLimitTokens {
		return out, st
	}
	softChars := orDefault(opts.SoftTrimChars, DefaultSoftTrimChars)
	head := orDefault(opts.HeadChars, DefaultHeadChars)
	tail := orDefault(opts.TailChars, DefaultTailChars)
	keep := orDefault(opts.KeepLastAssistants, defaultKeepAst)

	cutoff := len(msgs)
	if keep > 0 {
		cutoff = -1
		for i, seen := len(msgs)-1, 0; i >= 0; i-- {
			if a, ok := msgs[i].(*core.AssistantMessage); ok && a != nil {
				if seen++; seen == keep {
					cutoff = i
					break
				}
			}
		}
		if cutoff < 0 {
			return out, st
		}
	}
	first := -1
	for i, m := range msgs {
		if u, ok := m.(*core.UserMessage); ok && u != nil {
			first = i
			break
		}
	}
	if first < 0 {
		return out, st
	}

	var prunable []int
	for i := first + 1; i < cutoff; i++ {
		tr, ok := msgs[i].(*core.ToolResultMessage)
		if !ok || tr == nil || hasImage(tr.Content) {
			continue
		}
		if opts.IsToolPrunable != nil && !opts.IsToolPrunable(tr.ToolName) {
			continue
		}
		prunable = append(prunable, i)
		if t := softTrim(tr, softChars, head, tail); t != nil {
			out[i] = t
			nt := messageTokens(t)
			total += nt - tokens[i]
			tokens[i] = nt
			st.trimmed++
		}
	}

	if opts.HardLimitTokens > 0 && total > opts.HardLimitTokens {
		chars := 0
		for _, i := range prunable {
			chars += messageChars(out[i])
		}
		if chars >= opts.MinPrunableToolChars {
			for _, i := range prunable {
				if total <= opts.HardLimitTokens {
					break
				}
				tr := out[i].(*core.ToolResultMessage)
				if isCleared(tr) {
					continue
				}
				cp := *tr
				cp.Content = core.Content{&core.TextContent{Text: HardClearPlaceholder}}
				out[i] = &cp
				nt := messageTokens(&cp)
				total += nt - tokens[i]
				tokens[i] = nt
				st.cleared++
			}
		}
	}
	st.tokensAfter = total
	return out, st
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func hasImage(c core.Content) bool {
	for _, b := range c {
		if _, ok := b.(*core.ImageContent); ok {
			return true
		}
	}
	return false
}

func isCleared(tr *core.ToolResultMessage) bool {
	if len(tr.Content) != 1 {
		return false
	}
	t, ok := tr.Content[0].(*core.TextContent)
	return ok && t != nil && t.Text == HardClearPlaceholder
}

// softTrim returns a copy of tr cut to head and tail characters of its
// text, or nil when it is short enough. The text blocks count as joined by
// "\n", as in OpenClaw; other blocks are dropped with the cut.
func softTrim(tr *core.ToolResultMessage, maxChars, head, tail int) *core.ToolResultMessage {
	head, tail = max(head, 0), max(tail, 0)
	n, parts := 0, 0
	for _, b := range tr.Content {
		if t, ok := b.(*core.TextContent); ok && t != nil {
			n += charCount(t.Text)
			parts++
		}
	}
	if parts > 1 {
		n += parts - 1
	}
	if n <= maxChars || head+tail >= n {
		return nil
	}
	var sb strings.Builder
	written := 0
	for _, b := range tr.Content {
		if t, ok := b.(*core.TextContent); ok && t != nil {
			if written > 0 {
				sb.WriteByte('\n')
			}
			sb.WriteString(t.Text)
			written++
		}
	}
	text := sb.String()
	h := runeOffset(text, head)
	t := runeOffset(text, n-tail)
	trimmed := text[:h] + "\n...\n" + text[t:] +
		"\n\n[Tool result trimmed: kept first " + strconv.Itoa(head) + " chars and last " +
		strconv.Itoa(tail) + " chars of " + strconv.Itoa(n) + " chars.]"
	cp := *tr
	cp.Content = core.Content{&core.TextContent{Text: trimmed}}
	return &cp
}

// runeOffset returns the byte offset of the k-th rune of s.
func runeOffset(s string, k int) int {
	if k <= 0 {
		return 0
	}
	for i := range s {
		if k == 0 {
			return i
		}
		k--
	}
	return len(s)
}
