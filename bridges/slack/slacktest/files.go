package slacktest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

type storedFile struct {
	file File
	data []byte
}

// pendingUpload is a file between files.getUploadURLExternal and
// files.completeUploadExternal.
type pendingUpload struct {
	upload   Upload
	uploaded bool
}

// AddFile registers a file as if a user had uploaded it and returns its
// file object, whose url_private serves data to requests carrying the bot
// token. WithFile attaches such a file to a message event.
func (s *Server) AddFile(name, mimeType string, data []byte) File {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addFileLocked(name, name, mimeType, "", data).file
}

func (s *Server) addFileLocked(name, title, mimeType, user string, data []byte) *storedFile {
	id := fmt.Sprintf("F0FAKE%06d", s.nextSeqLocked())
	return s.storeFileLocked(id, name, title, mimeType, user, data)
}

func (s *Server) storeFileLocked(id, name, title, mimeType, user string, data []byte) *storedFile {
	if mimeType == "" {
		mimeType = mime.TypeByExtension(path.Ext(name))
		if mimeType == "" {
			mimeType = "application/octet-stream"
		}
		mimeType, _, _ = strings.Cut(mimeType, ";")
	}
	fileType := strings.TrimPrefix(path.Ext(name), ".")
	if fileType == "" {
		fileType = "binary"
	}
	now := s.clock().Unix()
	u := s.URL + "/files/" + id + "/" + url.PathEscape(name)
	f := &storedFile{
		file: File{
			ID: id, Created: now, Timestamp: now, Name: name, Title: title, Mimetype: mimeType,
			Filetype: fileType, PrettyType: strings.ToUpper(fileType), User: user, Mode: "hosted",
			Size: len(data), URLPrivate: u, URLPrivateDownload: u,
			Permalink: "https://" + s.Identity.TeamDomain + ".slack.com/files/" + user + "/" + id + "/" + url.PathEscape(name),
		},
		data: slices.Clone(data),
	}
	s.files[id] = f
	s.changes.Changed()
	return f
}

// serveFile serves url_private, <URL>/files/<id>[/<name>], to requests with
// the bot token in the Authorization header. Slack redirects others to a
// sign-in page; the fake answers 403 so a missing header fails loudly.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+s.BotToken {
		http.Error(w, "forbidden: url_private needs Authorization: Bearer <bot token>", http.StatusForbidden)
		return
	}
	s.mu.Lock()
	f := s.files[r.PathValue("id")]
	s.mu.Unlock()
	if f == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.file.Mimetype)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.data)))
	_, _ = w.Write(f.data)
}

// serveUpload takes the bytes of a file announced with
// files.getUploadURLExternal: a multipart body's "file" part, as slack-go
// sends it, or else the raw body.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		http.Error(w, "cannot read upload", http.StatusBadRequest)
		return
	}
	data := body
	if mediaType, mp, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mediaType == "multipart/form-data" {
		form, err := multipart.NewReader(bytes.NewReader(body), mp["boundary"]).ReadForm(maxRequestBytes)
		if err != nil {
			http.Error(w, "cannot parse multipart upload", http.StatusBadRequest)
			return
		}
		defer form.RemoveAll()
		fhs := form.File["file"]
		if len(fhs) == 0 {
			http.Error(w, `multipart upload has no "file" part`, http.StatusBadRequest)
			return
		}
		f, err := fhs[0].Open()
		if err == nil {
			data, err = io.ReadAll(f)
			f.Close()
		}
		if err != nil {
			http.Error(w, "cannot read multipart upload", http.StatusBadRequest)
			return
		}
	}
	s.mu.Lock()
	pu := s.pending[r.PathValue("id")]
	if pu != nil {
		pu.upload.Data = data
		pu.uploaded = true
		s.changes.Changed()
	}
	s.mu.Unlock()
	if pu == nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "OK - %d", len(data))
}

func (s *Server) filesGetUploadURLExternal(p *params) (map[string]any, *apiError) {
	name := p.str("filename")
	length, err := strconv.Atoi(p.str("length"))
	if name == "" || err != nil || length <= 0 {
		return nil, slackError("invalid_arguments")
	}
	id := fmt.Sprintf("F0FAKE%06d", s.nextSeqLocked())
	s.pending[id] = &pendingUpload{upload: Upload{
		FileID: id, Filename: name, Length: length, AltText: p.str("alt_txt"), SnippetType: p.str("snippet_type"),
	}}
	return map[string]any{"upload_url": s.URL + "/upload/v1/" + id, "file_id": id}, nil
}

func (s *Server) filesCompleteUploadExternal(p *params) (map[string]any, *apiError) {
	var summaries []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p.str("files")), &summaries); err != nil || len(summaries) == 0 {
		return nil, slackError("invalid_arguments")
	}
	for _, f := range summaries {
		if pu := s.pending[f.ID]; pu == nil || !pu.uploaded {
			return nil, slackError("file_not_found")
		}
	}
	channel := p.str("channel_id")
	var channels []string
	if cs := p.str("channels"); cs != "" {
		channels = strings.Split(cs, ",")
	}
	for _, c := range append([]string{channel}, channels...) {
		if c != "" && s.conversationLocked(c) == nil {
			return nil, slackError("channel_not_found")
		}
	}
	blocks, ok := p.rawJSON("blocks")
	if !ok {
		return nil, slackError("invalid_blocks_format")
	}
	files := make([]map[string]any, 0, len(summaries))
	for _, f := range summaries {
		pu := s.pending[f.ID]
		delete(s.pending, f.ID)
		up := pu.upload
		up.Title = f.Title
		if up.Title == "" {
			up.Title = up.Filename
		}
		up.Channel, up.Channels = channel, channels
		up.ThreadTS, up.InitialComment, up.Blocks = p.str("thread_ts"), p.str("initial_comment"), blocks
		s.storeFileLocked(up.FileID, up.Filename, up.Title, "", s.Identity.BotUserID, up.Data)
		s.uploads = append(s.uploads, up)
		files = append(files, map[string]any{"id": up.FileID, "title": up.Title})
	}
	return map[string]any{"files": files}, nil
}
