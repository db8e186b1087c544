package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func FuzzDecodeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"type":"req","id":"1","method":"chat.send","params":{"sessionKey":"main","message":"hi","idempotencyKey":"k"}}`,
		`{"type":"req","id":"1","method":"health"}`,
		`{"type":"req","id":"1","method":"m","params":null,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}`,
		`{"type":"req","id":"a","method":"m","id":"b","params":[1,"<&>",{"\u2028":1e400}]}`,
		`{"type":"res","id":"1","ok":true}`,
		`{"type":"req","id":"1","method":"m","1":0,"b":0}`,
		`[{"type":"req"}]`,
		`{"type":"req","id":"\xff","method":"\ud800"}`,
		`nope`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		frame, err := DecodeRequest(data)
		if err != nil {
			var fe *FrameError
			if !errors.As(err, &fe) || fe.ID == "" || fe.Message == "" {
				t.Fatalf("bad error %#v", err)
			}
			return
		}
		if frame.Type != TypeRequest || frame.ID == "" || frame.Method == "" {
			t.Fatalf("accepted an invalid frame: %+v", frame)
		}
		encoded, err := json.Marshal(frame)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		again, err := DecodeRequest(encoded)
		if err != nil {
			t.Fatalf("re-decode of %s: %v", encoded, err)
		}
		if again.ID != frame.ID || again.Method != frame.Method || again.Traceparent != frame.Traceparent ||
			(again.Params == nil) != (frame.Params == nil) || !sameJSON(t, again.Params, frame.Params) {
			t.Fatalf("round trip changed the frame:\n%+v\n%+v", frame, again)
		}
	})
}

// sameJSON compares two JSON values by meaning (encoding/json escapes <, >
// and & when it re-encodes raw params).
func sameJSON(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	decode := func(raw json.RawMessage) any {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("params %s: %v", raw, err)
		}
		return v
	}
	return reflect.DeepEqual(decode(a), decode(b))
}

func FuzzValidateConnect(f *testing.F) {
	for _, seed := range []string{
		minimalConnect,
		`{"minProtocol":3,"maxProtocol":3,"client":{"id":"openclaw-ios","displayName":"P","version":"1","platform":"iOS","deviceFamily":"iPhone","modelIdentifier":"m","mode":"node","instanceId":"i"},` +
			`"caps":["camera"],"commands":["c"],"permissions":{"camera":true},"pathEnv":"/bin","role":"node","scopes":["operator.read"],` +
			`"device":{"id":"d","publicKey":"k","signature":"s","signedAt":1700000000000,"nonce":"n"},"auth":{"token":"t","deviceToken":"d"},"locale":"en","userAgent":"ua"}`,
		`{"minProtocol":1e400,"maxProtocol":-0,"client":null}`,
		`{"minProtocol":3.0,"maxProtocol":1e20,"client":{"id":"cli","version":"1","platform":"p","mode":"cli"},"role":"admin"}`,
		`{"permissions":{"":1,"a/b":false},"scopes":[1,""],"device":{}}`,
		`null`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ValidateConnect(data)
		var ce *ConnectError
		switch {
		case errors.As(err, &ce):
			if ce.Message == "" {
				t.Fatal("empty message")
			}
			return
		case errors.Is(err, ErrInvalidRole):
			if p.Role == RoleOperator || p.Role == RoleNode {
				t.Fatalf("ErrInvalidRole for role %q", p.Role)
			}
			return
		case err != nil:
			t.Fatalf("unexpected error %v", err)
		}
		if p.MinProtocol < 1 || p.MaxProtocol < 1 || p.Scopes == nil || p.Client.Version == "" || p.Client.Platform == "" {
			t.Fatalf("accepted invalid params %+v", p)
		}
		CheckConnect(data)
		// What a client would send for p validates to p again.
		encoded, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		again, err := ValidateConnect(encoded)
		if err != nil {
			t.Fatalf("re-validate %s: %v", encoded, err)
		}
		if !reflect.DeepEqual(p, again) {
			t.Fatalf("round trip changed params:\n%+v\n%+v", p, again)
		}
	})
}
