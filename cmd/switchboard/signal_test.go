package main

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalsStopTheProcessCleanly runs the real binary (this test binary
// acting as main) as a child process, sends it SIGINT or SIGTERM once it is
// ready, and requires exit code 0 within the shutdown timeout.
func TestSignalsStopTheProcessCleanly(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "run", "--config", testConfig(t, 0), "--log-format", "json")
			cmd.Env = append(os.Environ(), "SWITCHBOARD_TEST_MAIN=1", "SWITCHBOARD_STATE_DIR="+t.TempDir())
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			waited := false
			t.Cleanup(func() {
				if !waited {
					_ = cmd.Process.Kill()
					<-exited
				}
			})

			waitReady(t, "http://"+listenAddr(t, stderr.String))
			sent := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				waited = true
				if err != nil {
					t.Fatalf("exit after %v: %v; stderr:\n%s", sig, err, stderr.String())
				}
				if took := time.Since(sent); took > shutdownTimeout {
					t.Errorf("took %v to stop, limit %v", took, shutdownTimeout)
				}
				if !strings.Contains(stderr.String(), `"signal":"`+sig.String()+`"`) {
					t.Errorf("shutdown log does not name the signal:\n%s", stderr.String())
				}
			case <-time.After(shutdownTimeout + 5*time.Second):
				t.Fatalf("still running %v after %v", shutdownTimeout+5*time.Second, sig)
			}
		})
	}
}
