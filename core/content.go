package core

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The block types of seed 000 §2, as they appear in a block's "type" member.
const (
	BlockTypeText     = "text"
	BlockTypeThinking = "thinking"
	BlockTypeImage    = "image"
	BlockTypeToolCall = "toolCall"
)

// ContentBlock is one element of a message's content array (seed 000 §2).
// The known blocks are *TextContent, *ThinkingContent, *ImageContent and
// *ToolCall; a block of any other type decodes to *RawBlock so that it
// survives a rewrite. Any block may appear in any message: the seed limits
// user and tool-result content to text and images, but a reader that
// enforced that would break on the next provider feature.
type ContentBlock interface {
	// BlockType returns the block's "type" member.
	BlockType() string
}

// Compile-time checks that every block type is a ContentBlock and encodes
// itself.
var (
	_ ContentBlock     = (*TextContent)(nil)
	_ ContentBlock     = (*ThinkingContent)(nil)
	_ ContentBlock     = (*ImageContent)(nil)
	_ ContentBlock     = (*ToolCall)(nil)
	_ ContentBlock     = (*RawBlock)(nil)
	_ json.Marshaler   = (*ToolCall)(nil)
	_ json.Unmarshaler = (*ToolCall)(nil)
	_ json.Marshaler   = Content(nil)
	_ json.Unmarshaler = (*Content)(nil)
)

// TextContent is a block of text (seed 000 §2.1).
type TextContent struct {
	Text string `json:"text"`
	// TextSignature is Anthropic's signature over the text, sent back so the
	// provider can verify its cache; omitted when empty.
	TextSignature string `json:"textSignature,omitempty"`
	// Extra holds the members this version does not know, keyed by name,
	// their values compacted. MarshalJSON writes them after the known
	// members in key order, so a block written by a newer program survives
	// a rewrite; keys that name a known member are not written. Nil for
	// blocks without unknown members.
	Extra map[string]json.RawMessage `json:"-"`
}

var textObject = knownObject{
	label: "text block", discKey: "type", discValue: BlockTypeText,
	keys: []string{"text", "textSignature"},
}

// BlockType returns "text".
func (*TextContent) BlockType() string { return BlockTypeText }

// MarshalJSON writes the block with "type" first.
func (c *TextContent) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

func (c *TextContent) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":"text","text":`...)
	b = appendJSONString(b, c.Text)
	if c.TextSignature != "" {
		b = append(b, `,"textSignature":`...)
		b = appendJSONString(b, c.TextSignature)
	}
	b, err := textObject.appendExtra(b, c.Extra)
	return append(b, '}'), err
}

// UnmarshalJSON reads a text block; a "type" other than "text" is an error.
func (c *TextContent) UnmarshalJSON(data []byte) error {
	*c = TextContent{}
	extra, err := textObject.decode(data, c.readMember)
	if err != nil {
		return decodeErr(textObject.label, err)
	}
	c.Extra = extra
	return nil
}

func (c *TextContent) readMember(k, v []byte) (bool, error) {
	switch string(k) {
	case "text":
		return true, named("text", readString(v, &c.Text))
	case "textSignature":
		return true, named("textSignature", readString(v, &c.TextSignature))
	}
	return false, nil
}

// ThinkingContent is the model's reasoning (seed 000 §2.2). It is kept in
// the transcript because Anthropic requires signed thinking blocks to be
// sent back unchanged on the next turn.
type ThinkingContent struct {
	Thinking string `json:"thinking"`
	// ThinkingSignature is Anthropic's signature over the thinking; omitted
	// when empty.
	ThinkingSignature string `json:"thinkingSignature,omitempty"`
	// Extra holds members this version does not know (see TextContent.Extra).
	Extra map[string]json.RawMessage `json:"-"`
}

var thinkingObject = knownObject{
	label: "thinking block", discKey: "type", discValue: BlockTypeThinking,
	keys: []string{"thinking", "thinkingSignature"},
}

// BlockType returns "thinking".
func (*ThinkingContent) BlockType() string { return BlockTypeThinking }

// MarshalJSON writes the block with "type" first.
func (c *ThinkingContent) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

func (c *ThinkingContent) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":"thinking","thinking":`...)
	b = appendJSONString(b, c.Thinking)
	if c.ThinkingSignature != "" {
		b = append(b, `,"thinkingSignature":`...)
		b = appendJSONString(b, c.ThinkingSignature)
	}
	b, err := thinkingObject.appendExtra(b, c.Extra)
	return append(b, '}'), err
}

// UnmarshalJSON reads a thinking block; a "type" other than "thinking" is an
// error.
func (c *ThinkingContent) UnmarshalJSON(data []byte) error {
	*c = ThinkingContent{}
	extra, err := thinkingObject.decode(data, c.readMember)
	if err != nil {
		return decodeErr(thinkingObject.label, err)
	}
	c.Extra = extra
	return nil
}

func (c *ThinkingContent) readMember(k, v []byte) (bool, error) {
	switch string(k) {
	case "thinking":
		return true, named("thinking", readString(v, &c.Thinking))
	case "thinkingSignature":
		return true, named("thinkingSignature", readString(v, &c.ThinkingSignature))
	}
	return false, nil
}

// ImageContent is an inline image (seed 000 §2.3).
type ImageContent struct {
	// Data is the image, base64-encoded, as providers take it.
	Data string `json:"data"`
	// MimeType is the image's media type, such as "image/png".
	MimeType string `json:"mimeType"`
	// Extra holds members this version does not know (see TextContent.Extra).
	Extra map[string]json.RawMessage `json:"-"`
}

var imageObject = knownObject{
	label: "image block", discKey: "type", discValue: BlockTypeImage,
	keys: []string{"data", "mimeType"},
}

// BlockType returns "image".
func (*ImageContent) BlockType() string { return BlockTypeImage }

// MarshalJSON writes the block with "type" first.
func (c *ImageContent) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

func (c *ImageContent) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":"image","data":`...)
	b = appendJSONString(b, c.Data)
	b = append(b, `,"mimeType":`...)
	b = appendJSONString(b, c.MimeType)
	b, err := imageObject.appendExtra(b, c.Extra)
	return append(b, '}'), err
}

// UnmarshalJSON reads an image block; a "type" other than "image" is an
// error.
func (c *ImageContent) UnmarshalJSON(data []byte) error {
	*c = ImageContent{}
	extra, err := imageObject.decode(data, c.readMember)
	if err != nil {
		return decodeErr(imageObject.label, err)
	}
	c.Extra = extra
	return nil
}

func (c *ImageContent) readMember(k, v []byte) (bool, error) {
	switch string(k) {
	case "data":
		return true, named("data", readString(v, &c.Data))
	case "mimeType":
		return true, named("mimeType", readString(v, &c.MimeType))
	}
	return false, nil
}

// ToolCall is the model's request to run a tool (seed 000 §2.4, seed 002
// §2.1). It is also the assembled call of a toolcall_end stream event.
type ToolCall struct {
	// ID is the provider's id for the call; the ToolResultMessage that
	// answers it carries the same id.
	ID string `json:"id"`
	// Name is the tool's name, such as "exec" or "read".
	Name string `json:"name"`
	// Arguments are the parsed JSON arguments. Numbers decode as float64,
	// as in JavaScript. A nil map encodes as {} because the member is
	// required.
	Arguments map[string]any `json:"arguments"`
	// ThoughtSignature is a provider signature tied to the call; omitted
	// when empty.
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
	// Extra holds members this version does not know (see TextContent.Extra).
	Extra map[string]json.RawMessage `json:"-"`
}

var toolCallObject = knownObject{
	label: "toolCall block", discKey: "type", discValue: BlockTypeToolCall,
	keys: []string{"id", "name", "arguments", "thoughtSignature"},
}

// BlockType returns "toolCall".
func (*ToolCall) BlockType() string { return BlockTypeToolCall }

// MarshalJSON writes the call with "type" first.
func (c *ToolCall) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

func (c *ToolCall) appendJSON(b []byte) ([]byte, error) {
	b = append(b, `{"type":"toolCall","id":`...)
	b = appendJSONString(b, c.ID)
	b = append(b, `,"name":`...)
	b = appendJSONString(b, c.Name)
	b = append(b, `,"arguments":`...)
	if c.Arguments == nil {
		b = append(b, "{}"...)
	} else {
		var err error
		if b, err = appendJSONObject(b, c.Arguments); err != nil {
			return b, fmt.Errorf("core: toolCall %q: arguments: %w", c.Name, err)
		}
	}
	if c.ThoughtSignature != "" {
		b = append(b, `,"thoughtSignature":`...)
		b = appendJSONString(b, c.ThoughtSignature)
	}
	b, err := toolCallObject.appendExtra(b, c.Extra)
	return append(b, '}'), err
}

// UnmarshalJSON reads a tool call; a "type" other than "toolCall" is an
// error, and so are arguments that are not an object. A missing "type" is
// accepted, since a ToolCall also appears where the type is implied.
func (c *ToolCall) UnmarshalJSON(data []byte) error {
	*c = ToolCall{}
	extra, err := toolCallObject.decode(data, c.readMember)
	if err != nil {
		return decodeErr(toolCallObject.label, err)
	}
	c.Extra = extra
	return nil
}

func (c *ToolCall) readMember(k, v []byte) (bool, error) {
	switch string(k) {
	case "id":
		return true, named("id", readString(v, &c.ID))
	case "name":
		return true, named("name", readString(v, &c.Name))
	case "arguments":
		// Into the field itself, so a repeated member merges and null
		// clears it, as with encoding/json.
		return true, named("arguments", json.Unmarshal(v, &c.Arguments))
	case "thoughtSignature":
		return true, named("thoughtSignature", readString(v, &c.ThoughtSignature))
	}
	return false, nil
}

// RawBlock is a content block of a type this version does not know. It
// keeps the block's JSON and writes it back byte for byte, so a transcript
// holding, say, a newer provider's block survives a rewrite. (Inside
// json.Marshal's output the bytes are compacted and HTML-escaped like all
// of json.Marshal's output; our own transcript lines are compact already.)
type RawBlock struct {
	// Type is the block's "type" member, read from JSON on decode.
	Type string
	// JSON is the whole block as it was read.
	JSON json.RawMessage
}

// BlockType returns the block's "type" member.
func (b *RawBlock) BlockType() string { return b.Type }

// MarshalJSON writes JSON unchanged; a RawBlock built without JSON writes
// just its type.
func (b *RawBlock) MarshalJSON() ([]byte, error) { return b.appendJSON(nil) }

func (b *RawBlock) appendJSON(dst []byte) ([]byte, error) {
	if len(b.JSON) == 0 {
		dst = append(dst, `{"type":`...)
		dst = appendJSONString(dst, b.Type)
		return append(dst, '}'), nil
	}
	dst, err := appendRawJSON(dst, b.JSON)
	if err != nil {
		return dst, fmt.Errorf("core: %q block: %w", b.Type, err)
	}
	return dst, nil
}

// UnmarshalJSON keeps a copy of data, which must be a JSON object with a
// string "type" member.
func (b *RawBlock) UnmarshalJSON(data []byte) error {
	t, err := blockType(data)
	if err != nil {
		return err
	}
	if err := syntaxError(data); err != nil {
		return decodeErr("content block", err)
	}
	*b = RawBlock{Type: string(t), JSON: bytes.Clone(data)}
	return nil
}

// blockType reads the "type" member of the block in data.
func blockType(data []byte) ([]byte, error) {
	v, found, err := discriminator(data, "type")
	if err != nil {
		return nil, decodeErr("content block", err)
	}
	if !found {
		if err := syntaxError(data); err != nil {
			return nil, decodeErr("content block", err)
		}
		return nil, decodeErrf("content block", "missing type")
	}
	t, err := discriminatorString("type", v)
	if err != nil {
		return nil, decodeErr("content block", err)
	}
	if len(t) == 0 {
		return nil, decodeErrf("content block", "empty type")
	}
	return t, nil
}

// UnmarshalContentBlock decodes one content block, choosing its Go type by
// its "type" member; an unknown type yields a *RawBlock.
func UnmarshalContentBlock(data []byte) (ContentBlock, error) {
	t, err := blockType(data)
	if err != nil {
		return nil, err
	}
	var blk interface {
		ContentBlock
		json.Unmarshaler
	}
	switch string(t) {
	case BlockTypeText:
		blk = new(TextContent)
	case BlockTypeThinking:
		blk = new(ThinkingContent)
	case BlockTypeImage:
		blk = new(ImageContent)
	case BlockTypeToolCall:
		blk = new(ToolCall)
	default:
		blk = new(RawBlock)
	}
	if err := blk.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return blk, nil
}

// Content is a message's content array. A nil Content encodes as [], since
// the member is required.
type Content []ContentBlock

// MarshalJSON writes the blocks in order; a nil block is an error.
func (c Content) MarshalJSON() ([]byte, error) { return c.appendJSON(nil) }

func (c Content) appendJSON(b []byte) ([]byte, error) {
	b = append(b, '[')
	for i, blk := range c {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendBlock(b, blk); err != nil {
			return b, fmt.Errorf("core: content[%d]: %w", i, err)
		}
	}
	return append(b, ']'), nil
}

// appendBlock writes one block, directly for our types and through its own
// JSON encoding for a block type an embedding program defined.
func appendBlock(b []byte, blk ContentBlock) ([]byte, error) {
	switch v := blk.(type) {
	case *TextContent:
		if v != nil {
			return v.appendJSON(b)
		}
	case *ThinkingContent:
		if v != nil {
			return v.appendJSON(b)
		}
	case *ImageContent:
		if v != nil {
			return v.appendJSON(b)
		}
	case *ToolCall:
		if v != nil {
			return v.appendJSON(b)
		}
	case *RawBlock:
		if v != nil {
			return v.appendJSON(b)
		}
	case nil:
	default:
		return appendJSONAny(b, v)
	}
	return b, fmt.Errorf("nil block")
}

// UnmarshalJSON decodes each block with UnmarshalContentBlock. null leaves
// the Content nil; [] makes it empty but not nil.
func (c *Content) UnmarshalJSON(data []byte) error {
	if isJSONNull(data) {
		*c = nil
		return nil
	}
	s, ok := newArrayScan(data)
	if !ok {
		return decodeErr("content", notAnArray(data))
	}
	out := Content{}
	for i := 0; ; i++ {
		elem, ok := s.next()
		if !ok {
			break
		}
		blk, err := UnmarshalContentBlock(elem)
		if err != nil {
			return decodeErr(fmt.Sprintf("content[%d]", i), err)
		}
		out = append(out, blk)
	}
	if s.failed() {
		return decodeErr("content", notAnArray(data))
	}
	*c = out
	return nil
}
