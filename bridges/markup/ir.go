package markup

// Doc is a parsed markdown document: the intermediate representation every
// renderer reads. The zero Doc is an empty document.
type Doc struct {
	// Blocks are the top-level blocks in source order.
	Blocks []Block
}

// BlockKind says which fields of a Block are meaningful.
type BlockKind uint8

// The kinds of block. Each names the Block fields it uses.
const (
	// Paragraph uses Inlines. A single newline inside a paragraph is kept as
	// "\n" in the text: chat clients show newlines, and LLM output means them.
	Paragraph BlockKind = iota
	// Heading uses Level (1 to 6) and Inlines.
	Heading
	// List uses Ordered, Start and Items.
	List
	// Quote uses Blocks, the quoted content.
	Quote
	// CodeBlock uses Lang (the first word of the fence's info string, maybe
	// empty) and Code (the content without the final newline).
	CodeBlock
	// Table uses Header, Rows and Align. Every row has len(Header) cells.
	Table
	// Rule is a thematic break ("---", "***"); it uses no field.
	Rule
)

// String returns the kind's name, for test failures and logs.
func (k BlockKind) String() string {
	switch k {
	case Paragraph:
		return "paragraph"
	case Heading:
		return "heading"
	case List:
		return "list"
	case Quote:
		return "quote"
	case CodeBlock:
		return "code"
	case Table:
		return "table"
	case Rule:
		return "rule"
	}
	return "unknown"
}

// Block is one block of a Doc. Kind says which of the other fields are set;
// the rest are zero.
type Block struct {
	Kind BlockKind

	// Level is a Heading's level, 1 to 6.
	Level int
	// Inlines is the text of a Paragraph or Heading.
	Inlines []Inline

	// Ordered is true for a numbered List; Start is its first number.
	Ordered bool
	Start   int
	// Items are a List's items.
	Items []ListItem

	// Blocks is a Quote's content.
	Blocks []Block

	// Lang and Code are a CodeBlock's language and content.
	Lang string
	Code string

	// Header, Rows and Align describe a Table. Align has one entry per
	// column.
	Header []Cell
	Rows   [][]Cell
	Align  []Align
}

// ListItem is one item of a List: its own blocks, usually a paragraph,
// sometimes followed by nested lists, code blocks or more paragraphs.
type ListItem struct {
	Blocks []Block
}

// Cell is the inline content of one table cell.
type Cell []Inline

// Align is a table column's alignment, from the delimiter row (":--",
// ":-:", "--:").
type Align uint8

// The column alignments. AlignNone renders like AlignLeft.
const (
	AlignNone Align = iota
	AlignLeft
	AlignCenter
	AlignRight
)

// Inline is a run of text with one set of styles and at most one link. The
// inline content of a block is a slice of runs; adjacent runs never have
// the same Style and Link (the parser merges them). Text is literal: markup
// and backslash escapes are resolved, nothing is escaped for any platform.
type Inline struct {
	// Text is the run's text; "\n" is a line break.
	Text string
	// Style is the set of styles on the run.
	Style Style
	// Link is the destination when the run is (part of) a link's label,
	// exactly as written; renderers decide which schemes they link.
	Link string
}

// Style is a set of inline styles, a bit set.
type Style uint8

// The inline styles. Code is a code span: its text is shown verbatim and a
// renderer may drop the other styles on it (Telegram does not let code
// nest with anything).
const (
	Bold    Style = 1 << iota // **bold** or __bold__
	Italic                    // *italic* or _italic_
	Strike                    // ~~strike~~
	Spoiler                   // ||spoiler||
	Code                      // `code`
)

// styleOrder is the order in which renderers open style markers, outermost
// first; Code is never a marker (it is rendered as one unit).
var styleOrder = [...]Style{Spoiler, Bold, Italic, Strike}

// Has reports whether s includes every style in t.
func (s Style) Has(t Style) bool { return s&t == t }
