package reply

import "testing"

func TestParseTags(t *testing.T) {
	cases := []struct {
		name, text, want string
		tags             Tags
	}{
		{"none", "hello [[world]]", "hello [[world]]", Tags{}},
		{"no brackets", "  plain  ", "  plain  ", Tags{}},
		{"current at start", "[[reply_to_current]] Hello", "Hello", Tags{ReplyToCurrent: true, HasReplyTag: true}},
		{"current with spaces and case", "[[ Reply_To_Current ]]\nHello", "Hello", Tags{ReplyToCurrent: true, HasReplyTag: true}},
		{"explicit id", "[[reply_to:123]] Hi", "Hi", Tags{ReplyToID: "123", HasReplyTag: true}},
		{"explicit id with spaces", "[[ reply_to : 456 ]] Hi", "Hi", Tags{ReplyToID: "456", HasReplyTag: true}},
		{"last explicit id wins", "[[reply_to:1]] a [[reply_to:2]] b", "a b", Tags{ReplyToID: "2", HasReplyTag: true}},
		{"both kinds", "[[reply_to_current]] [[reply_to:9]] x", "x", Tags{ReplyToCurrent: true, ReplyToID: "9", HasReplyTag: true}},
		{"mid-sentence after a space", "Sure [[reply_to_current]] thing", "Sure thing", Tags{ReplyToCurrent: true, HasReplyTag: true}},
		{"at the end", "Done. [[reply_to_current]]", "Done.", Tags{ReplyToCurrent: true, HasReplyTag: true}},
		{"glued to a word is left alone", "see x[[reply_to_current]]", "see x[[reply_to_current]]", Tags{}},
		{"inside a URL is left alone", "https://w/[[reply_to:1]]", "https://w/[[reply_to:1]]", Tags{}},
		{"empty id is rejected", "[[reply_to:]] x", "[[reply_to:]] x", Tags{}},
		{"blank id strips the tag", "[[reply_to: ]] x", "x", Tags{HasReplyTag: true}},
		{"id cannot hold a bracket", "[[reply_to:a]b]] x", "[[reply_to:a]b]] x", Tags{}},
		{"unclosed", "[[reply_to_current x", "[[reply_to_current x", Tags{}},
		{"audio tag anywhere", "voice[[audio_as_voice]] note", "voicenote", Tags{AudioAsVoice: true}},
		{"audio and reply", "[[audio_as_voice]] [[reply_to_current]] hi", "hi", Tags{AudioAsVoice: true, ReplyToCurrent: true, HasReplyTag: true}},
		{"tag alone", "[[reply_to_current]]", "", Tags{ReplyToCurrent: true, HasReplyTag: true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, tags := ParseTags(tc.text)
			if got != tc.want || tags != tc.tags {
				t.Errorf("ParseTags(%q) = %q, %+v; want %q, %+v", tc.text, got, tags, tc.want, tc.tags)
			}
		})
	}
}
