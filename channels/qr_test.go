package channels_test

import (
	"bytes"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboardhq/switchboard/channels"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// fixedCode is shaped like a phone-linking QR payload.
const fixedCode = "2@Xk3p9QvL0aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789+/==,aGVsbG8gd29ybGQgZnJvbSB0aGUgcXI=,c3dpdGNoYm9hcmQ=,dGVzdA=="

func TestRenderQRGolden(t *testing.T) {
	var buf bytes.Buffer
	channels.RenderQR(&buf, fixedCode)
	golden := filepath.Join("testdata", "qr.golden")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("rendering changed:\n%s\nwant:\n%s", buf.Bytes(), want)
	}
	// Half blocks: a square code about as many lines as half its width,
	// every line the same width, and nothing but block characters.
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	width := len([]rune(lines[0]))
	if width < 40 || len(lines) < width/2-2 || len(lines) > width/2+2 {
		t.Errorf("%d lines of %d cells: not a half-block square", len(lines), width)
	}
	for i, l := range lines {
		if len([]rune(l)) != width {
			t.Errorf("line %d is %d cells, want %d", i, len([]rune(l)), width)
		}
		if strings.Trim(l, "█▀▄ ") != "" {
			t.Errorf("line %d has other characters: %q", i, l)
		}
	}
	// Deterministic, and different codes draw differently.
	var again, other bytes.Buffer
	channels.RenderQR(&again, fixedCode)
	channels.RenderQR(&other, fixedCode+"x")
	if !bytes.Equal(again.Bytes(), buf.Bytes()) || bytes.Equal(other.Bytes(), buf.Bytes()) {
		t.Error("rendering is not a function of the code")
	}
}

func TestQRDataURL(t *testing.T) {
	u, err := channels.QRDataURL(fixedCode)
	if err != nil {
		t.Fatal(err)
	}
	b64, ok := strings.CutPrefix(u, "data:image/png;base64,")
	if !ok {
		t.Fatalf("not a PNG data URL: %.40s", u)
	}
	png, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("payload is not a PNG (%v)", err)
	}
}
