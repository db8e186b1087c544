package slack_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboardhq/switchboard/bridges"
	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/slack"
	"github.com/switchboardhq/switchboard/bridges/slack/slacktest"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/store"
)

// logBuffer collects log output from any goroutine.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// fileBridge builds a Socket Mode bridge that saves files into mediaDir
// (none when empty) and logs into logs.
func fileBridge(t *testing.T, srv *slacktest.Server, mediaDir string, max int64, logs *logBuffer) *slack.Bridge {
	t.Helper()
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, AppToken: srv.AppToken, APIURL: srv.APIURL, HTTPClient: srv.Client(),
		Session: core.SessionConfig{DMScope: core.DMScopePerChannelPeer}, MediaDir: mediaDir, MaxMediaBytes: max,
		MediaClient: srv.Client(), // the test's media servers are on loopback, which the default refuses
		Log:         slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withFileAt attaches a file object whose URLs are url, not registered
// with the fake.
func withFileAt(ev slacktest.EventCallback, id, url string) slacktest.EventCallback {
	m := ev.Event.(*slacktest.MessageEvent)
	m.Files = append(m.Files, slacktest.File{ID: id, Name: id + ".png", Mimetype: "image/png", Mode: "hosted", Size: 10,
		URLPrivate: url, URLPrivateDownload: url})
	m.Subtype = slacktest.SubtypeFileShare
	return ev
}

func TestInboundFiles(t *testing.T) {
	srv := slacktest.New(t)
	// A host outside Slack, which must never see the bot token.
	var foreignAuth []string
	var foreignMu sync.Mutex
	foreign := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		foreignMu.Lock()
		foreignAuth = append(foreignAuth, r.Header.Get("Authorization"))
		foreignMu.Unlock()
		_, _ = w.Write([]byte("0123456789"))
	}))
	defer foreign.Close()
	mediaDir := filepath.Join(t.TempDir(), "media", "slack")
	logs := &logBuffer{}
	b := fileBridge(t, srv, mediaDir, 1000, logs)
	sink := &bridgetest.Sink{}
	start(t, b, sink)

	png := bytes.Repeat([]byte{0x89, 'P', 'N', 'G'}, 25)
	pdf := []byte("%PDF-1.7 tiny")
	im := slacktest.WithChannelType("im")
	for _, tc := range []struct {
		name   string
		event  slacktest.EventCallback
		body   string
		media  [][]byte // file contents, in order
		mimes  []string
		failed int      // files described as not downloaded
		words  []string // what those descriptions must say
	}{
		{"text and a file", srv.Message("D100", "U9", "look at this", im, slacktest.WithFile("chart.png", "image/png", png)),
			"look at this", [][]byte{png}, []string{"image/png"}, 0, nil},
		{"a file and no text", srv.Message("D100", "U9", "", im, slacktest.WithFile("notes.pdf", "application/pdf", pdf)),
			"", [][]byte{pdf}, []string{"application/pdf"}, 0, nil},
		{"two files", srv.Message("D100", "U9", "both", im, slacktest.WithFile("a.png", "image/png", png), slacktest.WithFile("b.pdf", "application/pdf", pdf)),
			"both", [][]byte{png, pdf}, []string{"image/png", "application/pdf"}, 0, nil},
		{"a file over the cap", srv.Message("D100", "U9", "big", im, slacktest.WithFile("big.bin", "application/octet-stream", make([]byte, 2000))),
			"big", nil, nil, 1, []string{"application/octet-stream", "limit"}},
		{"a file that is gone", withFileAt(srv.Message("D100", "U9", "gone", im), "F0GONE", srv.URL+"/files/F0GONE/gone.png"),
			"gone", nil, nil, 1, []string{"image/png", "404"}},
		{"a file on a foreign host", withFileAt(srv.Message("D100", "U9", "elsewhere", im), "F0FOREIGN", foreign.URL+"/f.png"),
			"elsewhere", nil, nil, 1, []string{"not on a Slack host"}},
		{"a good file next to a bad one", withFileAt(srv.Message("D100", "U9", "mixed", im, slacktest.WithFile("ok.png", "image/png", png)), "F0GONE2", srv.URL+"/files/F0GONE2/x.png"),
			"mixed", [][]byte{png}, []string{"image/png"}, 1, []string{"404"}},
		{"a file with a mention", srv.AppMention("C200", "U9", "what is this?", slacktest.WithFile("m.png", "image/png", png)),
			"what is this?", [][]byte{png}, []string{"image/png"}, 0, nil},
	} {
		before := len(sink.Inbound())
		ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
		_, err := srv.WaitAck(ctx, srv.PushEvent(tc.event))
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := sink.Inbound()[before:]
		if len(got) != 1 {
			t.Errorf("%s: %d messages submitted, want 1", tc.name, len(got))
			continue
		}
		in := got[0].Message
		if in.Body != tc.body || len(in.Media) != len(tc.media) || len(in.UntrustedContext) != tc.failed {
			t.Errorf("%s: body %q, media %+v, context %q", tc.name, in.Body, in.Media, in.UntrustedContext)
			continue
		}
		for i, want := range tc.media {
			m := in.Media[i]
			if m.MimeType != tc.mimes[i] || !strings.HasPrefix(m.Path, mediaDir+string(filepath.Separator)) {
				t.Errorf("%s: media %d = %+v", tc.name, i, m)
			} else if data, err := os.ReadFile(m.Path); err != nil || !bytes.Equal(data, want) {
				t.Errorf("%s: media %d holds other bytes (%v)", tc.name, i, err)
			}
		}
		described := strings.Join(in.UntrustedContext, "\n")
		for _, word := range tc.words {
			if !strings.Contains(described, word) {
				t.Errorf("%s: untrusted context %q does not say %q", tc.name, described, word)
			}
		}
		if strings.Contains(described, srv.BotToken) {
			t.Errorf("%s: the bot token is in the untrusted context", tc.name)
		}
	}
	foreignMu.Lock()
	defer foreignMu.Unlock()
	for _, auth := range foreignAuth {
		if auth != "" {
			t.Errorf("a foreign host got Authorization %q", auth)
		}
	}
	if strings.Contains(logs.String(), srv.BotToken) || !strings.Contains(logs.String(), "file not downloaded") {
		t.Errorf("logs hold the token, or no warning about failed downloads:\n%s", logs.String())
	}
}

func TestInboundFileWithoutMediaDir(t *testing.T) {
	srv := slacktest.New(t)
	b := fileBridge(t, srv, "", 0, &logBuffer{})
	sink := &bridgetest.Sink{}
	start(t, b, sink)
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	id := srv.PushEvent(srv.Message("D100", "U9", "", slacktest.WithChannelType("im"), slacktest.WithFile("a.png", "image/png", []byte("png"))))
	if _, err := srv.WaitAck(ctx, id); err != nil {
		t.Fatal(err)
	}
	got := sink.Inbound()
	if len(got) != 1 || len(got[0].Message.Media) != 0 || len(got[0].Message.UntrustedContext) != 1 ||
		!strings.Contains(got[0].Message.UntrustedContext[0], "no media directory") {
		t.Fatalf("submitted = %+v", got)
	}
}

func TestOutboundFiles(t *testing.T) {
	srv := slacktest.New(t)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/cat.png":
			w.Header().Set("Content-Type", "image/png")
			_, _ = w.Write([]byte("cat pixels"))
		case "/huge.bin":
			_, _ = w.Write(make([]byte, 5000))
		default:
			http.NotFound(w, r)
		}
	}))
	defer web.Close()
	down := httptest.NewServer(http.NotFoundHandler())
	closed := down.URL
	down.Close()
	state := t.TempDir()
	mediaDir := filepath.Join(state, "media", "slack")
	if err := os.MkdirAll(mediaDir, 0o700); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(state, "media", "report.txt")
	if err := os.WriteFile(report, []byte("numbers"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	b := fileBridge(t, srv, mediaDir, 1000, logs)
	route := core.Route{Channel: "slack", To: "C200", ThreadID: "1700000000.000001"}

	rc, err := b.Deliver(t.Context(), bridges.Outbound{Route: route, Text: "Here:", MediaURLs: []string{web.URL + "/cat.png", report}})
	if err != nil || len(rc.MessageIDs) != 3 {
		t.Fatalf("Deliver = %+v, %v", rc, err)
	}
	ups := srv.Uploads()
	if len(ups) != 2 || string(ups[0].Data) != "cat pixels" || ups[0].Filename != "cat.png" || string(ups[1].Data) != "numbers" || ups[1].Filename != "report.txt" {
		t.Fatalf("uploads = %+v", ups)
	}
	for _, u := range ups {
		if u.Channel != "C200" || u.ThreadTS != "1700000000.000001" {
			t.Errorf("upload %s went to %s thread %q", u.Filename, u.Channel, u.ThreadTS)
		}
	}
	if reqs := strings.Join(srv.Requests(), " "); !strings.HasPrefix(reqs, "chat.postMessage files.getUploadURLExternal") {
		t.Errorf("requests %s: want the text before the files", reqs)
	}
	if rc.MessageIDs[1] != bridges.MessageID(ups[0].FileID) {
		t.Errorf("receipt %v, want the file ids after the text", rc.MessageIDs)
	}

	// A file alone, replying in the thread of the message answered.
	if _, err := b.Deliver(t.Context(), bridges.Outbound{Route: core.Route{Channel: "slack", To: "D100"}, ReplyToMessageID: "1700000000.000009", MediaURLs: []string{report}}); err != nil {
		t.Fatal(err)
	}
	if ups := srv.Uploads(); len(ups) != 3 || ups[2].Channel != "D100" || ups[2].ThreadTS != "1700000000.000009" {
		t.Errorf("file-only reply = %+v", ups[len(ups)-1])
	}

	for _, tc := range []struct{ name, ref, want string }{
		{"a file outside the media folder", "/etc/passwd", "outside the media directory"},
		{"a URL over the cap", web.URL + "/huge.bin", "limit"},
		{"a URL that fails", web.URL + "/missing.png?sig=SECRET123", "404"},
		{"a host that is down", closed + "/down.png?sig=SECRET123", "down.png"},
	} {
		before := len(srv.Uploads())
		_, err := b.Deliver(t.Context(), bridges.Outbound{Route: route, MediaURLs: []string{tc.ref}})
		name := filepath.Base(strings.Split(tc.ref, "?")[0])
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v, want an error naming %s and saying %q", tc.name, err, name, tc.want)
		} else if strings.Contains(err.Error(), "SECRET123") || strings.Contains(err.Error(), srv.BotToken) {
			t.Errorf("%s: the error holds a secret: %v", tc.name, err)
		}
		if n := len(srv.Uploads()); n != before {
			t.Errorf("%s: %d uploads, want none", tc.name, n-before)
		}
	}
	if strings.Contains(logs.String(), srv.BotToken) {
		t.Errorf("logs hold the token:\n%s", logs.String())
	}
}

func TestOutboundFilesAreNotUploadedTwice(t *testing.T) {
	srv := slacktest.New(t)
	st, err := store.Open(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	mediaDir := filepath.Join(t.TempDir(), "media", "slack")
	if err := os.MkdirAll(mediaDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, name := range []string{"a.txt", "b.txt"} {
		p := filepath.Join(mediaDir, name)
		if err := os.WriteFile(p, []byte(name), 0o600); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, p)
	}
	b := fileBridge(t, srv, mediaDir, 0, &logBuffer{})
	out := bridges.Outbound{Route: core.Route{Channel: "slack", To: "C200"}, Text: "Files:", MediaURLs: refs, Ledger: st, LedgerKey: "run-3:0"}
	// Before the crash, the text and the first file went out.
	if err := st.Record(t.Context(), "run-3:0:0", "1700000000.000001"); err != nil {
		t.Fatal(err)
	}
	if err := st.Record(t.Context(), "run-3:0:m0", "F0EARLIER"); err != nil {
		t.Fatal(err)
	}
	rc, err := b.Deliver(t.Context(), out)
	if err != nil {
		t.Fatal(err)
	}
	ups := srv.Uploads()
	if len(srv.Sent()) != 0 || len(ups) != 1 || ups[0].Filename != "b.txt" {
		t.Fatalf("sent %d messages and uploads %+v, want only b.txt", len(srv.Sent()), ups)
	}
	if len(rc.MessageIDs) != 3 || rc.MessageIDs[1] != "F0EARLIER" {
		t.Errorf("receipt = %v", rc.MessageIDs)
	}
	// Delivering again uploads nothing.
	if _, err := b.Deliver(t.Context(), out); err != nil || len(srv.Uploads()) != 1 || len(srv.Sent()) != 0 {
		t.Errorf("a repeated delivery sent more: %d uploads, %d messages, %v", len(srv.Uploads()), len(srv.Sent()), err)
	}
}

// Over HTTP the downloads share the request's budget, and still fit.
func TestInboundFileOverHTTP(t *testing.T) {
	srv := slacktest.New(t)
	mediaDir := filepath.Join(t.TempDir(), "media", "slack")
	b, err := slack.New(slack.Options{BotToken: srv.BotToken, APIURL: srv.APIURL, HTTPClient: srv.Client(), MediaDir: mediaDir,
		HTTP: &slack.HTTPOptions{SigningSecret: signingSecret}})
	if err != nil {
		t.Fatal(err)
	}
	sink := &journalSink{}
	start(t, b, sink)
	ts := httptest.NewServer(b)
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), bridgetest.WaitFor)
	defer cancel()
	ev := srv.Message("C200", "U9", "", slacktest.WithChannelType("channel"), slacktest.WithFile("plan.txt", "text/plain", []byte("the plan")))
	if code, err := srv.PostEvent(ctx, ts.URL, signingSecret, ev); err != nil || code != http.StatusOK {
		t.Fatalf("HTTP %d %v", code, err)
	}
	fresh, _, _ := sink.counts()
	if len(fresh) != 1 || len(fresh[0].Message.Media) != 1 || fresh[0].Message.Media[0].MimeType != "text/plain" {
		t.Fatalf("submitted = %+v", fresh)
	}
	if data, err := os.ReadFile(fresh[0].Message.Media[0].Path); err != nil || string(data) != "the plan" {
		t.Errorf("saved file = %q, %v", data, err)
	}
}
