package telegram

import (
	"context"
	"fmt"
	"net/http"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// DefaultMaxMediaBytes caps an inbound attachment; the Bot API's getFile
// serves at most 20 MB anyway.
const DefaultMaxMediaBytes = bridges.DefaultMaxMediaBytes

// attachment is a file a message carries.
type attachment struct {
	fileID, uniqueID, mime, name string
	size                         int64
}

// attachments lists a message's photo (the largest size), document, voice,
// audio and video.
func attachments(m *models.Message) []attachment {
	var out []attachment
	if n := len(m.Photo); n > 0 {
		p := m.Photo[n-1]
		out = append(out, attachment{fileID: p.FileID, uniqueID: p.FileUniqueID, mime: "image/jpeg", size: int64(p.FileSize)})
	}
	if d := m.Document; d != nil {
		out = append(out, attachment{fileID: d.FileID, uniqueID: d.FileUniqueID, mime: d.MimeType, name: d.FileName, size: d.FileSize})
	}
	if v := m.Voice; v != nil {
		out = append(out, attachment{fileID: v.FileID, uniqueID: v.FileUniqueID, mime: orDefault(v.MimeType, "audio/ogg"), size: v.FileSize})
	}
	if a := m.Audio; a != nil {
		out = append(out, attachment{fileID: a.FileID, uniqueID: a.FileUniqueID, mime: orDefault(a.MimeType, "audio/mpeg"), name: a.FileName, size: a.FileSize})
	}
	if v := m.Video; v != nil {
		out = append(out, attachment{fileID: v.FileID, uniqueID: v.FileUniqueID, mime: orDefault(v.MimeType, "video/mp4"), name: v.FileName, size: v.FileSize})
	}
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// fetchMedia downloads a message's attachments into MediaDir and adds
// them to in; an attachment that cannot be fetched (too large, gone, no
// media directory) is described in the untrusted context instead, and the
// message still goes through.
func (b *Bridge) fetchMedia(ctx context.Context, m *models.Message, in *core.Inbound) {
	for _, a := range attachments(m) {
		path, err := b.download(ctx, a)
		if err != nil {
			b.opts.Log.Warn("telegram: attachment not downloaded", "err", err)
			in.UntrustedContext = append(in.UntrustedContext, fmt.Sprintf("An attachment (%s) could not be downloaded: %v", a.mime, err))
			continue
		}
		in.Media = append(in.Media, core.Media{Path: path, MimeType: a.mime})
	}
}

// download fetches one file with getFile and the file endpoint, capped at
// MaxMediaBytes. The download URL holds the token and is never logged.
func (b *Bridge) download(ctx context.Context, a attachment) (string, error) {
	if b.opts.MediaDir == "" {
		return "", fmt.Errorf("no media directory is configured")
	}
	if a.size > b.opts.MaxMediaBytes {
		return "", fmt.Errorf("%d bytes is over the %d-byte limit", a.size, b.opts.MaxMediaBytes)
	}
	f, err := b.api.GetFile(ctx, &bot.GetFileParams{FileID: a.fileID})
	if err != nil {
		return "", b.redact(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.api.FileDownloadLink(f), nil)
	if err != nil {
		return "", b.redact(err)
	}
	path, err := bridges.SaveDownload(b.opts.HTTPClient, bridges.Download{
		Request: req, ID: a.uniqueID + "\x00" + a.fileID, Name: a.name, MimeType: a.mime, Size: a.size,
	}, b.opts.MediaDir, b.opts.MaxMediaBytes)
	return path, b.redact(err)
}
