package gateway

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/gateway/protocol"
)

// rawWS is a WebSocket client written out by hand over TCP, so a test can
// send what no library would: a frame header alone announcing 2^62 bytes,
// a message whose last byte is held back. Its frames are masked with a
// zero key, which leaves the payload as written.
type rawWS struct {
	t  testing.TB
	c  net.Conn
	br *bufio.Reader
}

// dialRawWS opens a TCP connection to addr from the local address from
// ("" for any), with extra request headers, and completes the upgrade.
func dialRawWS(t testing.TB, addr, from string, header http.Header) *rawWS {
	t.Helper()
	c := dialFrom(t, addr, from)
	var req strings.Builder
	fmt.Fprintf(&req, "GET / HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n", addr)
	for k, vs := range header {
		for _, v := range vs {
			fmt.Fprintf(&req, "%s: %s\r\n", k, v)
		}
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(c, req.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("upgrade: %s %s", resp.Status, body)
	}
	_ = c.SetReadDeadline(time.Time{})
	return &rawWS{t: t, c: c, br: br}
}

// dialFrom opens a TCP connection to addr from the local IP from ("" for
// any) and closes it when the test ends. Every 127.0.0.0/8 address is
// this machine's on Linux, so a test can play several clients.
func dialFrom(t testing.TB, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %q: %v", addr, from, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// header writes a client frame header (frameHeader).
func (w *rawWS) header(fin bool, opcode byte, length uint64) {
	w.t.Helper()
	w.write(frameHeader(fin, opcode, length))
}

// frameHeader is a client frame header: fin, opcode, the announced
// payload length and a zero masking key.
func frameHeader(fin bool, opcode byte, length uint64) []byte {
	b := []byte{opcode, 0x80}
	if fin {
		b[0] |= 0x80
	}
	switch {
	case length < 126:
		b[1] |= byte(length)
	case length <= 0xffff:
		b[1] |= 126
		b = binary.BigEndian.AppendUint16(b, uint16(length))
	default:
		b[1] |= 127
		b = binary.BigEndian.AppendUint64(b, length)
	}
	return append(b, 0, 0, 0, 0)
}

// httpClientFrom is an HTTP client whose connections come from the local
// IP from, for client.Options.HTTPClient; its idle connections are closed
// when the test ends.
func httpClientFrom(t testing.TB, from string) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// write writes raw bytes.
func (w *rawWS) write(b []byte) {
	w.t.Helper()
	if _, err := w.c.Write(b); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// text sends one whole text message.
func (w *rawWS) text(payload []byte) {
	w.t.Helper()
	w.header(true, 0x1, uint64(len(payload)))
	w.write(payload)
}

// frame reads one server frame. The server never masks.
func (w *rawWS) frame(deadline time.Duration) (opcode byte, payload []byte, err error) {
	_ = w.c.SetReadDeadline(time.Now().Add(deadline))
	defer w.c.SetReadDeadline(time.Time{})
	var h [2]byte
	if _, err := io.ReadFull(w.br, h[:]); err != nil {
		return 0, nil, err
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(w.br, ext[:]); err != nil {
			return 0, nil, err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(w.br, ext[:]); err != nil {
			return 0, nil, err
		}
		n = binary.BigEndian.Uint64(ext[:])
	}
	payload = make([]byte, n)
	if _, err := io.ReadFull(w.br, payload); err != nil {
		return 0, nil, err
	}
	return h[0] & 0x0f, payload, nil
}

// message reads server frames until a text message (the server sends
// each in one frame when small) and returns it; a close frame fails.
func (w *rawWS) message(deadline time.Duration) []byte {
	w.t.Helper()
	end := time.Now().Add(deadline)
	var msg []byte
	for {
		op, p, err := w.frame(time.Until(end))
		if err != nil {
			w.t.Fatalf("reading a message: %v", err)
		}
		switch op {
		case 0x8:
			w.t.Fatalf("closed while waiting for a message: %d %q", closeCode(p), closeReason(p))
		case 0x1, 0x0:
			msg = append(msg, p...)
			return msg
		}
	}
}

// response reads messages until the response to id, skipping events.
func (w *rawWS) response(id string, deadline time.Duration) []byte {
	w.t.Helper()
	end := time.Now().Add(deadline)
	prefix := `{"type":"res","id":` + fmt.Sprintf("%q", id)
	for {
		m := w.message(time.Until(end))
		if strings.HasPrefix(string(m), prefix) {
			return m
		}
	}
}

// connect completes the gateway handshake with the token.
func (w *rawWS) connect(token string) {
	w.t.Helper()
	w.message(10 * time.Second) // the challenge
	req, _ := json.Marshal(map[string]any{"type": "req", "id": "c", "method": "connect", "params": map[string]any{
		"minProtocol": protocol.ProtocolV4, "maxProtocol": protocol.ProtocolV4,
		"client": map[string]any{"id": "test", "version": "1", "platform": "linux", "mode": "test"},
		"auth":   map[string]any{"token": token}, "scopes": []string{protocol.ScopeRead},
	}})
	w.text(req)
	if res := w.response("c", 10*time.Second); !strings.Contains(string(res), `"ok":true`) {
		w.t.Fatalf("connect: %.300s", res)
	}
}

// closed waits up to deadline for the server's close frame, skipping
// other frames, and returns its code and reason; ok is false if none came
// (the deadline passed, or the socket ended without one).
func (w *rawWS) closed(deadline time.Duration) (code int, reason string, ok bool) {
	end := time.Now().Add(deadline)
	for {
		op, p, err := w.frame(time.Until(end))
		if err != nil {
			return 0, err.Error(), false
		}
		if op == 0x8 {
			return closeCode(p), closeReason(p), true
		}
	}
}

func closeCode(p []byte) int {
	if len(p) < 2 {
		return 1005
	}
	return int(binary.BigEndian.Uint16(p))
}

func closeReason(p []byte) string {
	if len(p) < 2 {
		return ""
	}
	return string(p[2:])
}
