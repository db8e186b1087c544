package channels

import (
	"crypto/rand"
	"fmt"
	"strings"
	"time"
)

// Pairing code rules (openclaw-facts §4.4).
const (
	// PairingAlphabet is what codes are made of: no 0, O, 1 or I.
	PairingAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	// PairingCodeLength is the length of a code.
	PairingCodeLength = 8
	// PairingTTL is how long a code can be approved.
	PairingTTL = time.Hour
	// MaxPendingPairingCodes is how many codes may wait per channel and
	// account; further unknown senders get nothing until one is decided.
	MaxPendingPairingCodes = 3
)

// NewPairingCode returns a random code of PairingCodeLength characters from
// PairingAlphabet.
func NewPairingCode() string {
	var b [PairingCodeLength]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	for i := range b {
		// 256 is a multiple of 32: no modulo bias.
		b[i] = PairingAlphabet[int(b[i])%len(PairingAlphabet)]
	}
	return string(b[:])
}

// PairingMessage is the reply an unknown sender gets: who they are, the
// code, and how the owner approves it (after OpenClaw's
// src/pairing/pairing-messages.ts).
func PairingMessage(channel, senderID, code string) string {
	cmd := fmt.Sprintf("switchboard pairing approve %s %s", channel, code)
	var b strings.Builder
	b.WriteString("Switchboard: access not configured.\n\n")
	fmt.Fprintf(&b, "Your %s user id: %s\n\n", channel, senderID)
	b.WriteString("Pairing code:\n```\n" + code + "\n```\n\n")
	b.WriteString("Ask the bot owner to approve with:\n" + cmd + "\n```\n" + cmd + "\n```")
	return b.String()
}
