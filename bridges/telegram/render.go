package telegram

import "github.com/switchboardhq/switchboard/bridges/markup"

// render converts markdown to Telegram HTML in chunks of at most
// ChunkLimit, never splitting a code fence or a tag (each chunk is valid
// HTML on its own).
func (b *Bridge) render(md string) []string {
	return markup.RenderChunks(md, markup.Telegram, b.opts.ChunkLimit, b.opts.ChunkMode)
}
