package telegram

// render converts markdown to Telegram HTML chunks of at most ChunkLimit.
func (b *Bridge) render(md string) []string {
	return []string{md}
}
