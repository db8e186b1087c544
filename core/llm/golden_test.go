package llm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/core/llm"
	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*/*.golden.json from what the providers produce")

// golden is what a recorded response turns into: the events emitted, the
// final message, and the error, if any.
type golden struct {
	Events  []string        `json:"events"`
	Message json.RawMessage `json:"message"`
	Error   *goldenError    `json:"error,omitempty"`
}

type goldenError struct {
	Kind         llm.ErrorKind `json:"kind"`
	Retryable    bool          `json:"retryable"`
	StatusCode   int           `json:"statusCode,omitempty"`
	RetryAfterMs int64         `json:"retryAfterMs,omitempty"`
	Message      string        `json:"message"`
}

// TestGoldenTranscripts plays every recorded provider response in
// testdata/golden/<vendor>/ through the provider: a .sse file is the body
// of a 200 event stream as the provider sends it; a .http file is an error
// response ("HTTP <status>", header lines, a blank line, the body). What
// comes out must match the .golden.json beside it (go test -update
// rewrites them; review the diff).
func TestGoldenTranscripts(t *testing.T) {
	for _, v := range vendors {
		files, err := filepath.Glob(filepath.Join("testdata", "golden", v.name, "*"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, path := range files {
			ext := filepath.Ext(path)
			if ext != ".sse" && ext != ".http" {
				continue
			}
			n++
			name := strings.TrimSuffix(filepath.Base(path), ext)
			t.Run(v.name+"/"+name, func(t *testing.T) {
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				resp := llmtest.RawStream(string(raw))
				if ext == ".http" {
					resp = parseRecordedError(t, raw)
				}
				srv := v.newServer(t, resp)
				rec := &recorder{}
				msg, serr := newProvider("prov", srv).Stream(context.Background(), userRequest("hi"), rec.emit)
				got := golden{Events: rec.types()}
				if got.Message, err = msg.MarshalJSON(); err != nil {
					t.Fatal(err)
				}
				if serr != nil {
					e := asError(t, serr)
					noKey(t, errorTexts(serr)...)
					got.Error = &goldenError{Kind: e.Kind, Retryable: e.Retryable, StatusCode: e.StatusCode, RetryAfterMs: e.RetryAfter.Milliseconds(), Message: e.Message}
				}
				compareGolden(t, strings.TrimSuffix(path, ext)+".golden.json", got)
			})
		}
		if n == 0 {
			t.Errorf("no recorded responses for %s", v.name)
		}
	}
}

// parseRecordedError reads a .http file into an error response.
func parseRecordedError(t *testing.T, raw []byte) llmtest.Response {
	t.Helper()
	r := bufio.NewReader(bytes.NewReader(raw))
	first, _ := r.ReadString('\n')
	status, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(first, "HTTP ")))
	if err != nil {
		t.Fatalf("first line %q: want HTTP <status>", first)
	}
	h := http.Header{}
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" || err != nil {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			t.Fatalf("header line %q", line)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	var body bytes.Buffer
	_, _ = body.ReadFrom(r)
	return llmtest.HTTPError(status, h, strings.TrimRight(body.String(), "\n"))
}

func compareGolden(t *testing.T, path string, got golden) {
	t.Helper()
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGoldenTranscripts -update to write it)", err)
	}
	var w golden
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	wb, _ := json.MarshalIndent(w, "", "  ")
	gb, _ := json.MarshalIndent(got, "", "  ")
	if !bytes.Equal(wb, gb) {
		t.Errorf("%s differs:\n got %s\nwant %s", path, gb, wb)
	}
}
