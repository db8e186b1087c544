package auth

import (
	"fmt"
	"testing"
	"time"
)

func BenchmarkVerifyDevice(b *testing.B) {
	proof, fields := goldenProof(goldenSigV3), goldenFields()
	b.ReportAllocs()
	for b.Loop() {
		if err := VerifyDevice(proof, fields, goldenNonce, goldenSignedAt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRateLimiterFailure(b *testing.B) {
	l := NewRateLimiter(RateLimitConfig{})
	ips := make([]string, 1000)
	for i := range ips {
		ips[i] = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		l.Failure(ips[i%len(ips)], ScopeSharedSecret, now)
		l.Check(ips[i%len(ips)], ScopeSharedSecret, now)
		i++
	}
}

func BenchmarkEqual(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Equal("3f9c2a7e4b1d8f06a5c3e9b27d4f1a80c6e2b9d4f7a13c58", "3f9c2a7e4b1d8f06a5c3e9b27d4f1a80c6e2b9d4f7a13c59")
	}
}
