package reply

import (
	"slices"
	"testing"
)

func TestSplitMedia(t *testing.T) {
	cases := []struct {
		name, text, want string
		media            []string
	}{
		{"no media", "hello", "hello", nil},
		{"url line", "Here you go\nMEDIA:https://example.com/cat.jpg", "Here you go", []string{"https://example.com/cat.jpg"}},
		{"lower case and spaces", "media:  https://example.com/a.png  ", "", []string{"https://example.com/a.png"}},
		{"indented", "  MEDIA: ./out/chart.png\ncaption", "caption", []string{"./out/chart.png"}},
		{"several on one line", "MEDIA: https://e.com/a.png https://e.com/b.png", "", []string{"https://e.com/a.png", "https://e.com/b.png"}},
		{"several lines", "a\nMEDIA:/tmp/x.png\nb\nMEDIA:/tmp/y.png", "a\nb", []string{"/tmp/x.png", "/tmp/y.png"}},
		{"quoted path with spaces", `MEDIA:"/tmp/my photo.jpg"`, "", []string{"/tmp/my photo.jpg"}},
		{"unquoted local path with spaces", "MEDIA:/tmp/my photo.jpg", "", []string{"/tmp/my photo.jpg"}},
		{"backticks", "MEDIA: `/tmp/x.png`", "", []string{"/tmp/x.png"}},
		{"file url", "MEDIA:file:///tmp/x.png", "", []string{"/tmp/x.png"}},
		{"home path", "MEDIA:~/pics/x.png", "", []string{"~/pics/x.png"}},
		{"windows path", `MEDIA:C:\out\x.png`, "", []string{`C:\out\x.png`}},
		{"bare filename", "MEDIA: chart.png", "", []string{"chart.png"}},
		{"json residue", `MEDIA:/tmp/a.png"},`, "", []string{"/tmp/a.png"}},
		{"extra words stay", "MEDIA: https://e.com/a.png look!", "look!", []string{"https://e.com/a.png"}},
		{"http is refused and kept", "MEDIA:http://e.com/a.png", "MEDIA:http://e.com/a.png", nil},
		{"localhost refused", "MEDIA:https://localhost/a.png", "MEDIA:https://localhost/a.png", nil},
		{"metadata address refused", "MEDIA:https://169.254.169.254/latest", "MEDIA:https://169.254.169.254/latest", nil},
		{"private address refused", "MEDIA:https://10.0.0.5/x.png", "MEDIA:https://10.0.0.5/x.png", nil},
		{"legacy numeric host refused", "MEDIA:https://2130706433/x.png", "MEDIA:https://2130706433/x.png", nil},
		{"credentials refused", "MEDIA:https://u:p@e.com/x.png", "MEDIA:https://u:p@e.com/x.png", nil},
		{"internal suffix refused", "MEDIA:https://db.internal/x", "MEDIA:https://db.internal/x", nil},
		{"public address accepted", "MEDIA:https://93.184.216.34/x.png", "", []string{"https://93.184.216.34/x.png"}},
		{"traversal dropped, not leaked", "ok\nMEDIA:../../.env", "ok", nil},
		{"traversal in the middle dropped", "MEDIA:/srv/../etc/passwd", "", nil},
		{"invalid non-path kept", "MEDIA: not a thing", "MEDIA: not a thing", nil},
		{"media word mid-line is text", "see MEDIA:/tmp/x.png", "see MEDIA:/tmp/x.png", nil},
		{"fenced code is left alone", "```\nMEDIA:/tmp/x.png\n```\nMEDIA:/tmp/y.png", "```\nMEDIA:/tmp/x.png\n```", []string{"/tmp/y.png"}},
		{"tilde fence", "~~~\nMEDIA:/tmp/x.png\n~~~", "~~~\nMEDIA:/tmp/x.png\n~~~", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, media := SplitMedia(tc.text)
			if got != tc.want || !slices.Equal(media, tc.media) {
				t.Errorf("SplitMedia(%q) = %q, %q; want %q, %q", tc.text, got, media, tc.want, tc.media)
			}
		})
	}
}

func TestIsBlockedHost(t *testing.T) {
	for host, want := range map[string]bool{
		"example.com": false, "cdn.example.co.uk": false, "93.184.216.34": false, "[2606:4700::1]": false,
		"": true, "localhost": true, "foo.localhost": true, "printer.local": true, "intranet": true,
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "192.168.1.1": true, "169.254.169.254": true,
		"100.64.0.1": true, "0.0.0.0": true, "[::1]": true, "[fe80::1]": true, "[fd00::1]": true,
		"[::ffff:127.0.0.1]": true, "0x7f.1": true, "127.1": true, "a..b": true, "example.com.": false,
		"metadata.google.internal": true,
	} {
		if got := isBlockedHost(host); got != want {
			t.Errorf("isBlockedHost(%q) = %v, want %v", host, got, want)
		}
	}
}
