package slack

import (
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"
)

func TestVerifySignature(t *testing.T) {
	const secret = "8f742231b10e8888abcd99yyyzzz85a5"
	now := time.Unix(1_531_420_618, 0)
	// Slack's documented worked example (docs "Verifying requests from Slack").
	body := []byte("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V" +
		"&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=" +
		"&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN" +
		"&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
	const docSig = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
	headers := func(sig string, ts int64) http.Header {
		h := http.Header{}
		h.Set("X-Slack-Signature", sig)
		h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
		return h
	}
	if got := Sign(secret, now.Unix(), body); got != docSig {
		t.Fatalf("Sign = %s, want Slack's documented %s", got, docSig)
	}
	if err := VerifySignature(headers(docSig, now.Unix()), body, secret, now); err != nil {
		t.Errorf("valid signature refused: %v", err)
	}
	for name, tc := range map[string]struct {
		h    http.Header
		body []byte
		want error
	}{
		"tampered body": {headers(docSig, now.Unix()), append(body, '!'), ErrBadSignature},
		"other secret":  {headers(Sign("other", now.Unix(), body), now.Unix()), body, ErrBadSignature},
		"replayed":      {headers(Sign(secret, now.Unix()-301, body), now.Unix()-301), body, ErrStaleSignature},
		"from future":   {headers(Sign(secret, now.Unix()+301, body), now.Unix()+301), body, ErrStaleSignature},
		"not v0":        {headers("v1=abc", now.Unix()), body, ErrBadSignature},
		"not hex":       {headers("v0=zz", now.Unix()), body, ErrBadSignature},
		"unsigned":      {http.Header{}, body, ErrNoSignature},
	} {
		if err := VerifySignature(tc.h, tc.body, secret, now); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
	if err := VerifySignature(headers(Sign(secret, now.Unix()-299, body), now.Unix()-299), body, secret, now); err != nil {
		t.Errorf("a 299 s old request refused: %v", err)
	}
}

func FuzzVerifySignature(f *testing.F) {
	f.Add("v0=00", "1531420618", []byte("x"))
	f.Fuzz(func(t *testing.T, sig, ts string, body []byte) {
		h := http.Header{}
		h.Set("X-Slack-Signature", sig)
		h.Set("X-Slack-Request-Timestamp", ts)
		// Random input must never verify (the secret is not in it).
		if VerifySignature(h, body, "secret-not-in-the-corpus", time.Unix(1_531_420_618, 0)) == nil {
			t.Fatalf("forged signature %q accepted", sig)
		}
	})
}
