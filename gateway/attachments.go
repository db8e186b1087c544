package gateway

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// maxAttachmentBytes caps the decoded attachments of one chat.send
// (openclaw-facts §1.11).
const maxAttachmentBytes = 5_000_000

// attachment is one chat.send attachment as OpenClaw's clients send it:
// the file's bytes in base64 (optionally as a data: URL) with its type.
type attachment struct {
	Type     string `json:"type"`
	MimeType string `json:"mimeType"`
	FileName string `json:"fileName"`
	Content  string `json:"content"`
}

// saveAttachments decodes chat.send's attachments into files under
// <stateDir>/media/webchat and returns them as the message's media. It
// checks everything before writing anything.
func (s *Server) saveAttachments(raw []any) ([]core.Media, *protocol.ErrorShape) {
	type decoded struct {
		mime, ext string
		data      []byte
	}
	var files []decoded
	total := 0
	for i, r := range raw {
		b, _ := json.Marshal(r)
		var a attachment
		if err := json.Unmarshal(b, &a); err != nil || a.Content == "" {
			return nil, protocol.InvalidRequest(fmt.Sprintf("attachment %d: expected {mimeType, content (base64)}", i+1), nil)
		}
		content := a.Content
		if rest, ok := strings.CutPrefix(content, "data:"); ok {
			meta, payload, found := strings.Cut(rest, ",")
			if !found || !strings.HasSuffix(meta, ";base64") {
				return nil, protocol.InvalidRequest(fmt.Sprintf("attachment %d: a data: URL must be base64", i+1), nil)
			}
			if a.MimeType == "" {
				a.MimeType = strings.TrimSuffix(meta, ";base64")
			}
			content = payload
		}
		data, err := base64.StdEncoding.DecodeString(content)
		if err != nil {
			return nil, protocol.InvalidRequest(fmt.Sprintf("attachment %d: content is not base64", i+1), nil)
		}
		total += len(data)
		if total > maxAttachmentBytes {
			return nil, protocol.InvalidRequest(fmt.Sprintf("attachments are over %d bytes in all; send smaller files", maxAttachmentBytes), nil)
		}
		mt := a.MimeType
		if mt == "" {
			mt = "application/octet-stream"
		}
		ext := strings.ToLower(filepath.Ext(a.FileName))
		if ext == "" || len(ext) > 8 || strings.ContainsAny(ext, `/\`) {
			ext = ""
			if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
				ext = exts[0]
			}
		}
		files = append(files, decoded{mime: mt, ext: ext, data: data})
	}
	if s.deps.StateDir == "" {
		return nil, protocol.Unavailable("attachments need a state directory", 0)
	}
	dir := filepath.Join(s.deps.StateDir, "media", "webchat")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errorShape(err)
	}
	media := make([]core.Media, 0, len(files))
	for _, f := range files {
		var id [12]byte
		_, _ = rand.Read(id[:])
		path := filepath.Join(dir, hex.EncodeToString(id[:])+f.ext)
		if err := os.WriteFile(path, f.data, 0o600); err != nil {
			return nil, errorShape(err)
		}
		media = append(media, core.Media{Path: path, MimeType: f.mime})
	}
	return media, nil
}
