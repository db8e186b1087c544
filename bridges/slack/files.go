package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"strings"
	"time"

	slackapi "github.com/slack-go/slack"
	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/core"
)

// downloadTimeout bounds the downloads of one message's files; in HTTP
// mode they also leave downloadReserve of the request's budget for Submit.
const (
	downloadTimeout = 30 * time.Second
	downloadReserve = time.Second
)

// fileDomains are the domains whose https hosts serve Slack's files; the
// bot token goes to them and to the Web API's own host, nowhere else
// (slack-go's GetFile applies the same rule).
var fileDomains = []string{"slack.com", "slack-gov.com"}

// fetchFiles downloads a message's files into MediaDir and adds them to
// in; a file that cannot be fetched (too large, gone, external, no media
// directory, out of time) is described in the untrusted context instead,
// and the message still goes through.
func (b *Bridge) fetchFiles(ctx context.Context, files []slackapi.File, in *core.Inbound) {
	if len(files) == 0 {
		return
	}
	var cancel context.CancelFunc
	if deadline, ok := ctx.Deadline(); ok {
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-downloadReserve))
	} else {
		ctx, cancel = context.WithTimeout(ctx, downloadTimeout)
	}
	defer cancel()
	for _, f := range files {
		p, err := b.download(ctx, f)
		if err != nil {
			err = b.redact(err)
			b.opts.Log.Warn("slack: file not downloaded", "file", f.ID, "err", err)
			in.UntrustedContext = append(in.UntrustedContext, fmt.Sprintf("An attachment (%s) could not be downloaded: %v", fileKind(f), err))
			continue
		}
		in.Media = append(in.Media, core.Media{Path: p, MimeType: f.Mimetype})
	}
}

// fileKind describes a file by its media type, which unlike its name is
// not the sender's free text.
func fileKind(f slackapi.File) string {
	if f.Mimetype != "" {
		return f.Mimetype
	}
	return "a file"
}

// download fetches one file's url_private_download (or url_private) with
// the bot token in the Authorization header, capped at MaxMediaBytes.
func (b *Bridge) download(ctx context.Context, f slackapi.File) (string, error) {
	if b.opts.MediaDir == "" {
		return "", errors.New("no media directory is configured")
	}
	u := f.URLPrivateDownload
	if u == "" {
		u = f.URLPrivate
	}
	if u == "" || f.IsExternal || f.Mode == "external" {
		return "", errors.New("the file is not hosted by Slack")
	}
	if !b.mayReceiveToken(u) {
		return "", errors.New("the file's URL is not on a Slack host, so the bot token is not sent there")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+b.opts.BotToken)
	return bridges.SaveDownload(b.opts.HTTPClient, bridges.Download{
		Request: req, ID: f.ID, Name: f.Name, MimeType: f.Mimetype, Size: int64(f.Size),
	}, b.opts.MediaDir, b.opts.MaxMediaBytes)
}

// mayReceiveToken reports whether raw is an https URL on a Slack host or
// on the Web API's own scheme and host.
func (b *Bridge) mayReceiveToken(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Scheme == "https" {
		host := strings.ToLower(u.Hostname())
		for _, d := range fileDomains {
			if host == d || strings.HasSuffix(host, "."+d) {
				return true
			}
		}
	}
	api, err := url.Parse(b.opts.APIURL)
	return b.opts.APIURL != "" && err == nil && api.Host != "" && u.Scheme == api.Scheme && strings.EqualFold(u.Host, api.Host)
}

// upload sends one attachment of a reply to channel, in thread when set,
// with Slack's external upload (files.getUploadURLExternal, the bytes,
// files.completeUploadExternal), each Web API call paced. The file is read
// into memory first (at most MaxMediaBytes), since Slack wants its length
// up front and a rate-limited step may need it again. It returns the
// file's id: completeUploadExternal reports no message ts.
func (b *Bridge) upload(ctx context.Context, channel, thread, ref string) (bridges.MessageID, error) {
	f, err := bridges.OpenMedia(ctx, b.mediaClient, b.opts.MediaDir, ref, b.opts.MaxMediaBytes)
	if err != nil {
		return "", withoutQuery(err)
	}
	data, err := io.ReadAll(f.Body)
	f.Body.Close()
	if err != nil {
		return "", err
	}
	if len(data) == 0 {
		return "", errors.New("the file is empty, and Slack refuses empty uploads")
	}
	var up *slackapi.GetUploadURLExternalResponse
	err = b.pace.call(ctx, "files.getUploadURLExternal", func() (err error) {
		up, err = b.api.GetUploadURLExternalContext(ctx, slackapi.GetUploadURLExternalParameters{FileName: f.Name, FileSize: len(data)})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("files.getUploadURLExternal: %w", err)
	}
	if err := b.api.UploadToURL(ctx, slackapi.UploadToURLParameters{UploadURL: up.UploadURL, Reader: bytes.NewReader(data), Filename: f.Name}); err != nil {
		return "", fmt.Errorf("sending the bytes: %w", err)
	}
	err = b.pace.call(ctx, "files.completeUploadExternal", func() error {
		_, err := b.api.CompleteUploadExternalContext(ctx, slackapi.CompleteUploadExternalParameters{
			Files: []slackapi.FileSummary{{ID: up.FileID, Title: f.Name}}, Channel: channel, ThreadTimestamp: thread,
		})
		return err
	})
	if err != nil {
		return "", fmt.Errorf("files.completeUploadExternal: %w", err)
	}
	return bridges.MessageID(up.FileID), nil
}

// mediaName names an attachment of a reply in errors: the last element of
// its path, never a URL's query, which may hold a secret.
func mediaName(ref string) string {
	if bridges.IsRemoteMedia(ref) {
		if u, err := url.Parse(ref); err == nil {
			if name := path.Base(u.Path); name != "/" && name != "." {
				return name
			}
			return u.Host
		}
	}
	return filepath.Base(strings.TrimPrefix(ref, "file://"))
}

// withoutQuery drops the query of the URL a failed request names (a
// signed URL's signature is a secret), keeping the error it wraps.
func withoutQuery(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return &url.Error{Op: ue.Op, URL: "(a URL)", Err: ue.Err}
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
}
