package client_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"

	"github.com/switchboardhq/switchboard/gateway/auth"
	"github.com/switchboardhq/switchboard/gateway/client"
	"github.com/switchboardhq/switchboard/gateway/protocol"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testNonce = "4f7c1f0e-2b7a-4c55-9a55-3f0d3b1a9e21"

// serve starts a fake gateway whose every connection runs script on the
// server side of the socket, and returns its ws:// URL. Cleanup waits for
// every script, so scripts may report with t.Errorf.
func serve(t testing.TB, script func(ctx context.Context, ws *websocket.Conn, r *http.Request)) string {
	t.Helper()
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wg.Add(1) // before the hijack, so srv.Close waits for this Add
		defer wg.Done()
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: []string{"localhost:*"}})
		if err != nil {
			t.Errorf("accept: %v", err)
			return
		}
		defer ws.CloseNow()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		script(ctx, ws, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		wg.Wait()
	})
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dial(t testing.TB, o client.Options) *client.Client {
	t.Helper()
	c, err := client.Dial(testCtx(t), o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return c
}

func write(ctx context.Context, t testing.TB, ws *websocket.Conn, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Errorf("marshal: %v", err)
		return
	}
	if err := ws.Write(ctx, websocket.MessageText, data); err != nil {
		t.Errorf("server write: %v", err)
	}
}

func readRequest(ctx context.Context, t testing.TB, ws *websocket.Conn) protocol.RequestFrame {
	t.Helper()
	_, data, err := ws.Read(ctx)
	if err != nil {
		t.Errorf("server read: %v", err)
		return protocol.RequestFrame{}
	}
	req, err := protocol.DecodeRequest(data)
	if err != nil {
		t.Errorf("server decode %s: %v", data, err)
	}
	return req
}

// challenge sends connect.challenge and returns the validated connect params.
func challenge(ctx context.Context, t testing.TB, ws *websocket.Conn) protocol.ConnectParams {
	t.Helper()
	write(ctx, t, ws, protocol.Event(protocol.EventConnectChallenge,
		protocol.ChallengePayload{Nonce: testNonce, Ts: 1_770_000_000_000}))
	req := readRequest(ctx, t, ws)
	if req.ID != "connect" || req.Method != "connect" {
		t.Errorf("first request = id %q method %q, want connect/connect", req.ID, req.Method)
	}
	p, err := protocol.ValidateConnect(req.Params)
	if err != nil {
		t.Errorf("ValidateConnect(%s): %v", req.Params, err)
	}
	return p
}

// accept completes the handshake with a v4 hello-ok.
func accept(ctx context.Context, t testing.TB, ws *websocket.Conn) protocol.ConnectParams {
	t.Helper()
	p := challenge(ctx, t, ws)
	hello, err := protocol.HelloOk{
		Server: protocol.ServerInfo{Version: "test", ConnID: "conn-1"},
		Auth:   &protocol.HelloAuth{Role: p.Role, Scopes: p.Scopes},
		Policy: protocol.DefaultPolicy(),
	}.MarshalFor(protocol.ProtocolV4)
	if err != nil {
		t.Errorf("hello: %v", err)
	}
	write(ctx, t, ws, protocol.OK("connect", json.RawMessage(hello)))
	return p
}

// drain reads until the client closes, answering its close handshake.
func drain(ctx context.Context, ws *websocket.Conn) {
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			return
		}
	}
}

func TestDialSignsDeviceProof(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.UnixMilli(1_770_000_000_123)
	url := serve(t, func(ctx context.Context, ws *websocket.Conn, r *http.Request) {
		if got := r.Header.Get("Origin"); got != "http://localhost:18789" {
			t.Errorf("Origin = %q", got)
		}
		p := accept(ctx, t, ws)
		proof, fields, ok := auth.FromConnect(p)
		if !ok {
			t.Errorf("connect has no device: %+v", p)
		} else if err := auth.VerifyDevice(proof, fields, testNonce, now); err != nil {
			t.Errorf("VerifyDevice: %v", err)
		}
		if proof.ID != client.DeviceID(priv) || proof.SignedAt != now.UnixMilli() {
			t.Errorf("proof = %+v", proof)
		}
		want := protocol.ClientInfo{ID: "cli", Version: "switchboard", Platform: runtime.GOOS, Mode: "cli"}
		if p.Client != want || p.Role != protocol.RoleOperator || p.Auth == nil || p.Auth.Token != "tok" {
			t.Errorf("params = %+v", p)
		}
		drain(ctx, ws)
	})
	c := dial(t, client.Options{
		URL:    url,
		Header: http.Header{"Origin": {"http://localhost:18789"}},
		Token:  "tok",
		Scopes: []string{protocol.ScopeRead, protocol.ScopeWrite},
		Device: priv,
		Now:    func() time.Time { return now },
	})
	if c.Protocol() != protocol.ProtocolV4 || c.Hello().Server.ConnID != "conn-1" ||
		c.Hello().Auth == nil || len(c.Hello().Auth.Scopes) != 2 {
		t.Errorf("hello = %+v", c.Hello())
	}
	if !strings.Contains(string(c.HelloRaw()), `"type":"hello-ok"`) {
		t.Errorf("HelloRaw = %s", c.HelloRaw())
	}
	if c.Challenge().Nonce != testNonce {
		t.Errorf("Challenge = %+v", c.Challenge())
	}
}

func TestCallStreamDeliversEveryResponse(t *testing.T) {
	url := serve(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		accept(ctx, t, ws)
		seq := int64(7)
		write(ctx, t, ws, protocol.Event("presence", map[string]any{}))
		write(ctx, t, ws, protocol.EventFrame{Type: protocol.TypeEvent, Event: protocol.EventTick,
			Payload: protocol.TickPayload{Ts: 1}, Seq: &seq})
		for range 2 { // agent via CallStream, then via Call
			req := readRequest(ctx, t, ws)
			write(ctx, t, ws, protocol.OK(req.ID, map[string]string{"status": "accepted"}))
			write(ctx, t, ws, protocol.OK(req.ID, map[string]string{"status": "ok"}))
		}
		req := readRequest(ctx, t, ws)
		write(ctx, t, ws, protocol.Fail(req.ID, protocol.UnknownMethod(req.Method)))
		drain(ctx, ws)
	})
	c := dial(t, client.Options{URL: url})
	ctx := testCtx(t)

	ev, err := c.Next(ctx, func(e client.Event) bool { return e.Name == protocol.EventTick })
	if err != nil || ev.Seq == nil || *ev.Seq != 7 || string(ev.Payload) != `{"ts":1}` {
		t.Fatalf("Next = %+v, %v", ev, err)
	}

	s, err := c.CallStream(ctx, "agent", map[string]string{"message": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`{"status":"accepted"}`, `{"status":"ok"}`} {
		r, err := s.Next(ctx)
		if err != nil || !r.OK || r.ID != s.ID() || string(r.Payload) != want {
			t.Fatalf("stream Next = %+v, %v; want %s", r, err, want)
		}
	}
	s.Close()

	got, err := c.Call(ctx, "agent", nil)
	if err != nil || string(got) != `{"status":"accepted"}` {
		t.Fatalf("Call = %s, %v", got, err)
	}

	_, err = c.Call(ctx, "nope", nil)
	var shape *protocol.ErrorShape
	if !errors.As(err, &shape) || shape.Code != protocol.CodeInvalidRequest || shape.Message != "unknown method: nope" {
		t.Fatalf("Call(nope) err = %v", err)
	}
}

func TestDialRejected(t *testing.T) {
	tests := []struct {
		name       string
		script     func(ctx context.Context, t *testing.T, ws *websocket.Conn)
		rawConnect func(p *protocol.ConnectParams)
		wantCode   string // Err.Code, "" for no response
		wantDetail [2]string
		wantClose  int
		wantReason string
	}{{
		name: "pairing required",
		script: func(ctx context.Context, t *testing.T, ws *websocket.Conn) {
			challenge(ctx, t, ws)
			write(ctx, t, ws, protocol.Fail("connect", protocol.PairingRequired("req-1", protocol.PairingReasonNotPaired)))
			_ = ws.Close(protocol.ClosePolicyViolation, protocol.ReasonPairingRequired)
		},
		wantCode:   protocol.CodeNotPaired,
		wantDetail: [2]string{"requestId", "req-1"},
		wantClose:  protocol.ClosePolicyViolation,
		wantReason: protocol.ReasonPairingRequired,
	}, {
		name: "corrupted device proof",
		rawConnect: func(p *protocol.ConnectParams) {
			p.Device.Nonce = "not-the-challenge"
		},
		script: func(ctx context.Context, t *testing.T, ws *websocket.Conn) {
			p := challenge(ctx, t, ws)
			proof, fields, _ := auth.FromConnect(p)
			var de *auth.DeviceError
			if err := auth.VerifyDevice(proof, fields, testNonce, time.Now()); !errors.As(err, &de) {
				t.Errorf("VerifyDevice = %v, want a DeviceError", err)
				return
			}
			write(ctx, t, ws, protocol.Fail("connect", de.ErrorShape()))
			_ = ws.Close(protocol.ClosePolicyViolation, de.Message)
		},
		wantCode:   protocol.CodeInvalidRequest,
		wantDetail: [2]string{"reason", auth.ReasonNonceMismatch},
		wantClose:  protocol.ClosePolicyViolation,
		wantReason: "device nonce mismatch",
	}, {
		name: "closed without a response",
		script: func(ctx context.Context, t *testing.T, ws *websocket.Conn) {
			challenge(ctx, t, ws)
			_ = ws.Close(protocol.CloseMessageTooBig, protocol.ReasonPreauthTooLarge)
		},
		wantClose:  protocol.CloseMessageTooBig,
		wantReason: protocol.ReasonPreauthTooLarge,
	}, {
		name: "closed before the challenge",
		script: func(ctx context.Context, t *testing.T, ws *websocket.Conn) {
			_ = ws.Close(protocol.CloseNormal, "")
		},
		wantClose: protocol.CloseNormal,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, priv, _ := ed25519.GenerateKey(nil)
			url := serve(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) { tt.script(ctx, t, ws) })
			c, err := client.Dial(testCtx(t), client.Options{URL: url, Device: priv, RawConnect: tt.rawConnect})
			if c != nil {
				t.Fatal("Dial returned a client")
			}
			var ce *client.ConnectError
			if !errors.As(err, &ce) {
				t.Fatalf("Dial err = %v, want *ConnectError", err)
			}
			if ce.CloseCode != tt.wantClose || ce.CloseReason != tt.wantReason {
				t.Errorf("close = %d %q, want %d %q", ce.CloseCode, ce.CloseReason, tt.wantClose, tt.wantReason)
			}
			if tt.wantCode == "" {
				if ce.Err != nil {
					t.Errorf("Err = %v, want nil", ce.Err)
				}
				return
			}
			var shape *protocol.ErrorShape
			if !errors.As(err, &shape) || shape.Code != tt.wantCode {
				t.Errorf("Err = %v, want code %s", ce.Err, tt.wantCode)
			}
			if got := client.Detail(err, tt.wantDetail[0]); got != tt.wantDetail[1] {
				t.Errorf("Detail(%s) = %q, want %q", tt.wantDetail[0], got, tt.wantDetail[1])
			}
		})
	}
}

func TestDialContextEndsHandshake(t *testing.T) {
	ctx, cancel := context.WithCancel(testCtx(t))
	url := serve(t, func(sctx context.Context, ws *websocket.Conn, _ *http.Request) {
		challenge(sctx, t, ws)
		cancel() // the client gives up while waiting for the response
		drain(sctx, ws)
	})
	_, err := client.Dial(ctx, client.Options{URL: url})
	var ce *client.ConnectError
	if !errors.Is(err, context.Canceled) || errors.As(err, &ce) {
		t.Fatalf("Dial err = %v, want context.Canceled", err)
	}
}

func TestDialRawBadFrame(t *testing.T) {
	url := serve(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		write(ctx, t, ws, protocol.Event(protocol.EventConnectChallenge, protocol.ChallengePayload{Nonce: testNonce}))
		_, data, err := ws.Read(ctx)
		if err != nil {
			t.Errorf("server read: %v", err)
			return
		}
		var fe *protocol.FrameError
		if _, err := protocol.DecodeRequest(data); !errors.As(err, &fe) {
			t.Errorf("DecodeRequest(%s) = %v", data, err)
			return
		}
		write(ctx, t, ws, protocol.Fail(fe.ID, fe.ErrorShape()))
		_ = ws.Close(protocol.ClosePolicyViolation, protocol.ReasonInvalidRequestFrame)
	})
	ctx := testCtx(t)
	c, err := client.DialRaw(ctx, client.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if ev, err := c.Next(ctx, nil); err != nil || ev.Name != protocol.EventConnectChallenge {
		t.Fatalf("Next = %+v, %v", ev, err)
	}
	s, err := c.Watch(protocol.InvalidFrameID)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := c.Send(ctx, []byte(`{"type":"req"}`)); err != nil {
		t.Fatal(err)
	}
	r, err := s.Next(ctx)
	if err != nil || r.OK || r.Error == nil || !strings.HasPrefix(r.Error.Message, "invalid request frame") {
		t.Fatalf("response = %+v, %v", r, err)
	}

	select {
	case <-c.Closed():
	case <-ctx.Done():
		t.Fatal("server close not seen")
	}
	if code, reason := c.CloseErr(); code != protocol.ClosePolicyViolation || reason != protocol.ReasonInvalidRequestFrame {
		t.Errorf("CloseErr = %d %q", code, reason)
	}
	if _, err := s.Next(ctx); !errors.Is(err, client.ErrClosed) {
		t.Errorf("stream Next after close = %v", err)
	}
	if _, err := c.Call(ctx, "health", nil); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Call after close = %v", err)
	}
	if _, err := c.Next(ctx, nil); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Next after close = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after server close = %v", err)
	}
}

func TestReaderDropsEventsAndSkipsBadFrames(t *testing.T) {
	url := serve(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		accept(ctx, t, ws)
		for i := range int64(3) {
			seq := i + 1
			write(ctx, t, ws, protocol.EventFrame{Type: protocol.TypeEvent, Event: "chat", Seq: &seq})
		}
		_ = ws.Write(ctx, websocket.MessageText, []byte("not json"))
		write(ctx, t, ws, map[string]string{"type": "surprise"})
		req := readRequest(ctx, t, ws)
		write(ctx, t, ws, protocol.OK(req.ID, nil))
		drain(ctx, ws)
	})
	c := dial(t, client.Options{URL: url, EventBuffer: 1})
	// The reader handles frames in order, so once health is answered every
	// earlier frame has been routed.
	if _, err := c.Call(testCtx(t), "health", nil); err != nil {
		t.Fatal(err)
	}
	if got := c.DroppedEvents(); got != 2 {
		t.Errorf("DroppedEvents = %d, want 2", got)
	}
	if got := c.BadFrames(); got != 2 {
		t.Errorf("BadFrames = %d, want 2", got)
	}
	if ev := <-c.Events(); *ev.Seq != 1 {
		t.Errorf("kept event seq = %d, want 1", *ev.Seq)
	}
}

func TestServerCloseEndsPendingCall(t *testing.T) {
	url := serve(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		accept(ctx, t, ws)
		readRequest(ctx, t, ws)
		_ = ws.Close(protocol.CloseAuthChanged, protocol.ReasonAuthChanged)
	})
	c := dial(t, client.Options{URL: url})
	_, err := c.Call(testCtx(t), "agent.wait", nil)
	if !errors.Is(err, client.ErrClosed) {
		t.Fatalf("Call = %v, want ErrClosed", err)
	}
	if code, reason := c.CloseErr(); code != protocol.CloseAuthChanged || reason != protocol.ReasonAuthChanged {
		t.Errorf("CloseErr = %d %q", code, reason)
	}
	for range c.Events() {
		t.Error("event after close")
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	url := serve(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		accept(ctx, t, ws)
		drain(ctx, ws)
	})
	c, err := client.Dial(testCtx(t), client.Options{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := c.CloseErr(); code != 0 {
		t.Errorf("CloseErr while open = %d", code)
	}
	for range 2 {
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	select {
	case <-c.Closed():
	default:
		t.Fatal("Closed not closed after Close")
	}
	if code, _ := c.CloseErr(); code != int(websocket.StatusNormalClosure) {
		t.Errorf("CloseErr = %d, want 1000", code)
	}
	if err := c.Send(testCtx(t), []byte(`{}`)); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
}

func TestDialRejectsBadDeviceKey(t *testing.T) {
	_, err := client.Dial(testCtx(t), client.Options{URL: "ws://127.0.0.1:1/", Device: make([]byte, 3)})
	if err == nil || !strings.Contains(err.Error(), "device key") {
		t.Fatalf("Dial = %v", err)
	}
}

func BenchmarkCall(b *testing.B) {
	url := serve(b, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		accept(ctx, b, ws)
		for {
			_, data, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			req, _ := protocol.DecodeRequest(data)
			if err := ws.Write(context.Background(), websocket.MessageText,
				[]byte(`{"type":"res","id":"`+req.ID+`","ok":true,"payload":{"ok":true}}`)); err != nil {
				return
			}
		}
	})
	c := dial(b, client.Options{URL: url})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Call(ctx, "health", nil); err != nil {
			b.Fatal(err)
		}
	}
}
