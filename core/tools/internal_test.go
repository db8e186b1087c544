package tools

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		120 * time.Second:       "120s",
		time.Second:             "1s",
		20 * time.Millisecond:   "20ms",
		1500 * time.Millisecond: "1.5s",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDecodedLen(t *testing.T) {
	for n := range 20 {
		data := strings.Repeat("x", n)
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding} {
			s := enc.EncodeToString([]byte(data))
			if got := decodedLen(s); got != n {
				t.Errorf("decodedLen(%q) = %d, want %d", s, got, n)
			}
		}
	}
	if got := decodedLen("AAAA\nAAAA\n"); got != 6 {
		t.Errorf("with line breaks: %d, want 6", got)
	}
}

func TestCaseConversions(t *testing.T) {
	for in, want := range map[string]string{
		"filePath": "file_path", "file_path": "file_path", "FilePath": "file_path",
		"fileURL": "file_url", "HTTPStatus": "http_status", "file-path": "file_path",
		"maxBytes2": "max_bytes2", "x": "x", "": "",
	} {
		if got := snakeCase(in); got != want {
			t.Errorf("snakeCase(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"file_path": "filePath", "filePath": "filePath", "FilePath": "filePath",
		"file-path": "filePath", "old_text": "oldText", "x": "x", "": "", "_a_b": "aB",
	} {
		if got := camelCase(in); got != want {
			t.Errorf("camelCase(%q) = %q, want %q", in, got, want)
		}
	}
}
