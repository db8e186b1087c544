package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

func BenchmarkDecodeRequest(b *testing.B) {
	frame := []byte(`{"type":"req","id":"550e8400-e29b-41d4-a716-446655440000","method":"chat.send",` +
		`"params":{"sessionKey":"main","message":"` + strings.Repeat("hello ", 100) + `","idempotencyKey":"k-1"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := DecodeRequest(frame); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateConnect(b *testing.B) {
	params := json.RawMessage(`{"minProtocol":3,"maxProtocol":4,"client":{"id":"openclaw-control-ui","version":"2026.4.12","platform":"web","mode":"webchat"},` +
		`"role":"operator","scopes":["operator.read","operator.write"],"caps":["tool-events"],"auth":{"token":"t"},` +
		`"device":{"id":"34750f98bd59fcfc946da45aaabe933be154a4b5094e1c4abf42866505f3c97e","publicKey":"iojj3XQJ8ZX9UtstPLpdcspnCb8dlBIb83SIAbQPb1w","signature":"s","signedAt":1700000000000,"nonce":"n"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ValidateConnect(params); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuthorize(b *testing.B) {
	scopes := []string{ScopeRead, ScopeWrite}
	b.ReportAllocs()
	for b.Loop() {
		if Authorize(RoleOperator, scopes, "chat.send", ProtocolV4) != nil {
			b.Fatal("denied")
		}
	}
}

func BenchmarkEventAllowed(b *testing.B) {
	scopes := []string{ScopeRead}
	b.ReportAllocs()
	for b.Loop() {
		EventAllowed("exec.approval.requested", RoleOperator, scopes, ProtocolV4)
	}
}

// A 1 MiB attachment-sized frame: decoding must stay a small multiple of
// one pass over the bytes.
func BenchmarkDecodeRequestLarge(b *testing.B) {
	frame := []byte(`{"type":"req","id":"1","method":"chat.send","params":{"sessionKey":"main","message":"hi",` +
		`"attachments":[{"type":"image","mimeType":"image/png","content":"` + strings.Repeat("QUJD", 1<<18) + `"}],"idempotencyKey":"k"}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		if _, err := DecodeRequest(frame); err != nil {
			b.Fatal(err)
		}
	}
}
