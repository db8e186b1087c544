package store

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const holdDirEnv = "SWITCHBOARD_STORE_TEST_HOLD_DIR"

// TestHelperHoldStore is not a test: run as a child process by
// TestOpenLockedByOtherProcess, it opens the store, commits a row, says
// "ready" and waits to be killed.
func TestHelperHoldStore(t *testing.T) {
	dir := os.Getenv(holdDirEnv)
	if dir == "" {
		t.Skip("helper process only")
	}
	s, err := Open(t.Context(), dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	if _, err := s.writer.Exec(`INSERT INTO meta (key, value) VALUES ('child', ?)`, strconv.Itoa(os.Getpid())); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin) // until the parent kills us
	os.Exit(0)
}

// TestOpenLockedByOtherProcess checks the lock across processes, that it goes
// away when the holder is SIGKILLed, and that what the holder committed before
// it died is there.
func TestOpenLockedByOtherProcess(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("state dir lock is not enforced on this platform")
	}
	ctx := t.Context()
	dir := t.TempDir()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldStore$", "-test.count=1")
	cmd.Env = append(os.Environ(), holdDirEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v; want ready", line, err)
	}
	childPid := cmd.Process.Pid

	s, err := Open(ctx, dir)
	if err == nil {
		s.Close()
		t.Fatal("Open of a dir held by another process succeeded")
	}
	if !errors.Is(err, ErrLocked) {
		t.Errorf("errors.Is(%v, ErrLocked) = false", err)
	}
	if want := fmt.Sprintf("(pid %d)", childPid); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name the holder %s", err, want)
	}

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait() // "signal: killed"
	killed = true

	s = openStore(t, dir)
	var got string
	if err := s.reader.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'child'`).Scan(&got); err != nil {
		t.Fatalf("row committed by the killed process: %v", err)
	}
	if got != strconv.Itoa(childPid) {
		t.Errorf("child row = %q, want %d", got, childPid)
	}
}

// TestWriterBeginsImmediate checks that a writer transaction holds SQLite's
// write lock from BEGIN on, so it can never fail upgrading a read lock.
func TestWriterBeginsImmediate(t *testing.T) {
	ctx := t.Context()
	s := openStore(t, t.TempDir())
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()

	other := rawDB(t, s.Path()) // busy_timeout 0: fail at once
	other.SetMaxOpenConns(1)
	_, err = other.ExecContext(ctx, `BEGIN IMMEDIATE`)
	if err == nil {
		other.ExecContext(ctx, `ROLLBACK`)
		t.Fatal("a second BEGIN IMMEDIATE succeeded while a writer transaction was open; want SQLITE_BUSY")
	}
	if !strings.Contains(err.Error(), "SQLITE_BUSY") && !strings.Contains(err.Error(), "locked") {
		t.Errorf("second BEGIN IMMEDIATE: %v; want SQLITE_BUSY", err)
	}
}
