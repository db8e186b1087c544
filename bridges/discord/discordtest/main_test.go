package discordtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitCtx bounds how long a test waits for the fake.
func waitCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// noAuth makes do send no Authorization header.
const noAuth = "-"

// do sends a REST request to path (under /api/v9 unless it starts with
// /api) with body as JSON (raw for []byte and string) and auth as the
// Authorization header ("" for the right one).
func do(t *testing.T, s *Server, method, path string, body any, auth string) (int, []byte, http.Header) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	case string:
		r = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	if !strings.HasPrefix(path, "/api") {
		path = "/api/v9" + path
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch auth {
	case "":
		req.Header.Set("Authorization", "Bot "+s.Token)
	case noAuth:
	default:
		req.Header.Set("Authorization", auth)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out, resp.Header
}

// mustDo is do that wants a 2xx and decodes the answer into dst.
func mustDo(t *testing.T, s *Server, method, path string, body, dst any) {
	t.Helper()
	status, out, _ := do(t, s, method, path, body, "")
	if status/100 != 2 {
		t.Fatalf("%s %s = %d %s", method, path, status, out)
	}
	if dst != nil {
		if err := json.Unmarshal(out, dst); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, out, err)
		}
	}
}

// wantJSON compares got with want as JSON values.
func wantJSON(t *testing.T, what string, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %s is not JSON: %v", what, got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad want %s: %v", what, want, err)
	}
	gj, _ := json.Marshal(g)
	wj, _ := json.Marshal(w)
	if string(gj) != string(wj) {
		t.Errorf("%s =\n%s\nwant\n%s", what, gj, wj)
	}
}

// recordingTB catches the errors the fake reports about misuse.
type recordingTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recordingTB) errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}
