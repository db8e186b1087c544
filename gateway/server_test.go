package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestHealthzAndReadyz(t *testing.T) {
	ready := false
	s := New(DefaultConfig(), Deps{Readiness: func() (bool, map[string]string) {
		state := "starting"
		if ready {
			state = "ready"
		}
		return ready, map[string]string{"store": state}
	}})
	h := s.Handler()

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("/healthz = %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}

	for _, want := range []bool{false, true} {
		ready = want
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		var body struct {
			Ready      bool              `json:"ready"`
			Components map[string]string `json:"components"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		wantCode := http.StatusServiceUnavailable
		if want {
			wantCode = http.StatusOK
		}
		if rec.Code != wantCode || body.Ready != want || body.Components["store"] == "" {
			t.Errorf("ready=%v: /readyz = %d %s", want, rec.Code, rec.Body.String())
		}
	}

	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "/healthz", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz = %d, want 405", rec.Code)
	}
}

func TestStartServesAndStopReleasesThePort(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Port = 0
	s := New(cfg, Deps{StateDir: t.TempDir()})
	if s.Addr() != nil {
		t.Errorf("Addr before Start = %v, want nil", s.Addr())
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	if host, _, _ := net.SplitHostPort(addr); host != "127.0.0.1" {
		t.Errorf("default bind listens on %s, want loopback", addr)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz without a readiness func = %d, want 200", resp.StatusCode)
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("port still held after Stop: %v", err)
	}
	ln.Close()
}

func TestStartOnBusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := DefaultConfig()
	cfg.Port = busy.Addr().(*net.TCPAddr).Port
	err = New(cfg, Deps{StateDir: t.TempDir()}).Start(context.Background())
	if !errors.Is(err, ErrAddrInUse) {
		t.Fatalf("Start on a busy port: %v, want ErrAddrInUse", err)
	}
}

func TestStopBeforeStartIsANoop(t *testing.T) {
	if err := New(DefaultConfig(), Deps{}).Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestConfigAddrAndValidate(t *testing.T) {
	tests := []struct {
		cfg     Config
		addr    string
		wantErr string
	}{
		{DefaultConfig(), "127.0.0.1:18789", ""},
		{Config{Bind: BindLAN, Port: 80}, "0.0.0.0:80", ""},
		{Config{Bind: BindCustom, CustomBindHost: "10.1.2.3", Port: 1}, "10.1.2.3:1", ""},
		{Config{Bind: BindCustom, Port: 1}, "", "customBindHost: required when bind is custom"},
		{Config{Bind: BindCustom, CustomBindHost: "::1", Port: 1}, "", `customBindHost: "::1" is not an IPv4 address`},
		{Config{Bind: BindLoopback, CustomBindHost: "10.1.2.3", Port: 1}, "", "customBindHost: only used when bind is custom"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%+v: unexpected %v", tt.cfg, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%+v: got %v, want %q", tt.cfg, err, tt.wantErr)
		case tt.wantErr == "" && tt.cfg.Addr() != tt.addr:
			t.Errorf("%+v: Addr = %q, want %q", tt.cfg, tt.cfg.Addr(), tt.addr)
		}
	}
	var m BindMode
	if err := m.UnmarshalText([]byte(" LAN ")); err != nil || m != BindLAN {
		t.Errorf("UnmarshalText(LAN) = %q, %v", m, err)
	}
	if err := m.UnmarshalText([]byte("tailnet")); err == nil {
		t.Errorf("tailnet is not supported and must be rejected")
	}
}
