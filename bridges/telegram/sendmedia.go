package telegram

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

var photoExts = map[string]bool{".jpg": true, ".jpeg": true, ".png": true, ".gif": true, ".webp": true}

// sendMedia sends one attachment of a reply: an http(s) URL is passed to
// Telegram, which fetches it (as a photo for image extensions, else as a
// document); a local file is uploaded only when it lies inside the media
// directory, so a model cannot make the bot send arbitrary files from
// disk.
func (b *Bridge) sendMedia(ctx context.Context, route core.Route, ref string) (*models.Message, error) {
	id, err := chatID(route)
	if err != nil {
		return nil, err
	}
	var file models.InputFile
	name := ref
	if bridges.IsRemoteMedia(ref) {
		file = &models.InputFileString{Data: ref}
		if u, err := url.Parse(ref); err == nil {
			name = u.Path
		}
	} else {
		path, err := b.localMedia(ref)
		if err != nil {
			return nil, err
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("telegram: media %s: %w", filepath.Base(path), err)
		}
		defer f.Close()
		file = &models.InputFileUpload{Filename: filepath.Base(path), Data: f}
	}
	thread := threadID(route, false)
	var msg *models.Message
	if photoExts[strings.ToLower(filepath.Ext(name))] {
		msg, err = b.api.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: id, MessageThreadID: thread, Photo: file})
	} else {
		msg, err = b.api.SendDocument(ctx, &bot.SendDocumentParams{ChatID: id, MessageThreadID: thread, Document: file})
	}
	return msg, b.redact(err)
}

// localMedia resolves a local media reference inside MediaDir's parent
// (the state directory's media folder), refusing anything outside it.
func (b *Bridge) localMedia(ref string) (string, error) {
	p, err := bridges.LocalMedia(b.opts.MediaDir, ref)
	if err != nil {
		return "", fmt.Errorf("telegram: %w", err)
	}
	return p, nil
}
