package store

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestGatewayTokenCreatedOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state") // created on demand
	tok, created, err := GatewayToken(dir)
	if err != nil || !created {
		t.Fatalf("first GatewayToken = %v, %v; want created", created, err)
	}
	if !isLowerHex(tok, 48) {
		t.Fatalf("token %q is not 48 lowercase hex characters", tok)
	}
	path := filepath.Join(dir, GatewayTokenFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", path, perm)
		}
		if di, _ := os.Stat(dir); di.Mode().Perm() != 0o700 {
			t.Errorf("state dir has mode %04o, want 0700", di.Mode().Perm())
		}
	}
	if b, _ := os.ReadFile(path); string(b) != tok+"\n" {
		t.Errorf("file holds %q, want the token and a newline", b)
	}
	again, created, err := GatewayToken(dir)
	if err != nil || created || again != tok {
		t.Fatalf("second GatewayToken = %q, %v, %v; want the same token, not created", again, created, err)
	}
	// Nothing but the token (no temporary files) is left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("state dir holds %v, want only %s", names, GatewayTokenFile)
	}

	// A token written by hand, with surrounding whitespace, is read.
	other := t.TempDir()
	hand := strings.Repeat("ab", 24)
	if err := os.WriteFile(filepath.Join(other, GatewayTokenFile), []byte("  "+hand+"\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, created, err := GatewayToken(other); got != hand || created || err != nil {
		t.Errorf("hand-written token = %q, %v, %v", got, created, err)
	}
	if _, _, err := GatewayToken(""); err == nil || !strings.Contains(err.Error(), "SWITCHBOARD_STATE_DIR") {
		t.Errorf("empty dir: %v", err)
	}
}

func TestGatewayTokenRefusesExposedFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permission bits")
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620} {
		dir := t.TempDir()
		tok, _, err := GatewayToken(dir)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, GatewayTokenFile)
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		got, created, err := GatewayToken(dir)
		if err == nil || got != "" || created {
			t.Fatalf("mode %04o: GatewayToken = %q, %v, %v; want refused", mode, got, created, err)
		}
		for _, want := range []string{path, "may have leaked", "delete the file", "chmod 600"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("mode %04o: error %q does not say %q", mode, err, want)
			}
		}
		if strings.Contains(err.Error(), tok) {
			t.Errorf("mode %04o: error contains the token", mode)
		}
		// The file is left alone: the operator decides.
		if fi, _ := os.Stat(path); fi.Mode().Perm() != mode {
			t.Errorf("mode %04o: file mode changed to %04o", mode, fi.Mode().Perm())
		}
	}
}

func TestGatewayTokenRefusesCorruptFile(t *testing.T) {
	for name, content := range map[string]string{
		"empty":       "",
		"short":       strings.Repeat("a", 47),
		"long":        strings.Repeat("a", 49),
		"upper-case":  strings.Repeat("AB", 24),
		"not hex":     strings.Repeat("zz", 24),
		"two tokens":  strings.Repeat("a", 48) + "\n" + strings.Repeat("b", 48),
		"large":       strings.Repeat("a", 48) + strings.Repeat(" ", 1000),
		"inner space": strings.Repeat("a", 24) + " " + strings.Repeat("a", 24),
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, GatewayTokenFile)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, created, err := GatewayToken(dir)
		if err == nil || got != "" || created {
			t.Errorf("%s: GatewayToken = %q, %v, %v; want refused", name, got, created, err)
			continue
		}
		for _, want := range []string{path, "48 lowercase hex", "delete it"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q does not say %q", name, err, want)
			}
		}
		if b, _ := os.ReadFile(path); string(b) != content {
			t.Errorf("%s: file was changed", name)
		}
	}

	// Not a regular file: a directory, and a symlink (even to a good token).
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, GatewayTokenFile), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := GatewayToken(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
	if runtime.GOOS != "windows" {
		dir := t.TempDir()
		target := filepath.Join(t.TempDir(), "elsewhere")
		if err := os.WriteFile(target, []byte(strings.Repeat("a", 48)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, GatewayTokenFile)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := GatewayToken(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("symlink: %v", err)
		}
	}
}

// TestGatewayTokenConcurrentFirstUse races first calls, both through
// GatewayToken and past its in-process lock (as separate processes would),
// and expects one token, created once.
func TestGatewayTokenConcurrentFirstUse(t *testing.T) {
	for name, get := range map[string]func(string) (string, bool, error){
		"GatewayToken":  GatewayToken,
		"file protocol": gatewayToken,
	} {
		t.Run(name, func(t *testing.T) {
			for range 20 {
				dir := t.TempDir()
				const n = 8
				var (
					wg      sync.WaitGroup
					mu      sync.Mutex
					tokens  = map[string]int{}
					creates int
				)
				start := make(chan struct{})
				for range n {
					wg.Go(func() {
						<-start
						tok, created, err := get(dir)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						defer mu.Unlock()
						tokens[tok]++
						if created {
							creates++
						}
					})
				}
				close(start)
				wg.Wait()
				if len(tokens) != 1 || creates != 1 {
					t.Fatalf("%d concurrent first calls: %d distinct tokens, %d created; want 1 and 1", n, len(tokens), creates)
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 1 {
					t.Fatalf("state dir holds %d entries, want only the token", len(entries))
				}
			}
		})
	}
}
