package transcript_test

import (
	"bytes"
	"errors"
	"path/filepath"
	"testing"

	"github.com/switchboardhq/switchboard/core/transcript"
)

// faultyHandle writes through to the real file but can fail the way a full
// disk or a dying device does.
type faultyHandle struct {
	transcript.Handle
	writeHalf   bool  // write half the bytes, then fail
	writeErr    error // fail without writing
	syncErr     error
	truncateErr error
}

var errDisk = errors.New("injected: no space left on device")

func (h *faultyHandle) Write(b []byte) (int, error) {
	switch {
	case h.writeErr != nil:
		return 0, h.writeErr
	case h.writeHalf:
		n, err := h.Handle.Write(b[:len(b)/2])
		if err != nil {
			return n, err
		}
		return n, errDisk
	}
	return h.Handle.Write(b)
}

func (h *faultyHandle) Sync() error {
	if h.syncErr != nil {
		return h.syncErr
	}
	return h.Handle.Sync()
}

func (h *faultyHandle) Truncate(n int64) error {
	if h.truncateErr != nil {
		return h.truncateErr
	}
	return h.Handle.Truncate(n)
}

func TestAppendFaults(t *testing.T) {
	msgs := sampleMessages()
	for _, tc := range []struct {
		name       string
		h          faultyHandle
		wantBroken bool
	}{
		{name: "write fails", h: faultyHandle{writeErr: errDisk}},
		{name: "partial write is cut off again", h: faultyHandle{writeHalf: true}},
		{name: "partial write that cannot be cut off", h: faultyHandle{writeHalf: true, truncateErr: errDisk}, wantBroken: true},
		{name: "fsync fails", h: faultyHandle{syncErr: errDisk}, wantBroken: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			f, _, err := transcript.Open(path, transcript.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Append(msgs[0]); err != nil {
				t.Fatal(err)
			}
			before := readFile(t, path)

			h := tc.h
			h.Handle = f.SwapHandle(&h)
			err = f.Append(msgs[1:]...)
			if !errors.Is(err, errDisk) {
				t.Fatalf("Append error = %v, want the injected one", err)
			}
			if n := len(f.Messages()); n != 1 {
				t.Errorf("Messages has %d after a failed Append, want 1", n)
			}
			if after := readFile(t, path); !tc.wantBroken && !bytes.Equal(after, before) {
				t.Errorf("a failed Append left %q in the file", after[len(before):])
			}

			// Put the good handle back: a healthy File appends again, a
			// broken one refuses until it is reopened.
			f.SwapHandle(h.Handle)
			err = f.Append(msgs[1])
			if tc.wantBroken {
				if !errors.Is(err, transcript.ErrBroken) {
					t.Fatalf("Append on a broken File = %v, want ErrBroken", err)
				}
				_ = f.Close()
				// Reopening repairs whatever the failure left.
				g, rep, err := transcript.Open(path, transcript.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer g.Close()
				if len(rep.Messages) < 1 {
					t.Fatalf("reopen lost history: %d messages", len(rep.Messages))
				}
				if tc.h.writeHalf && !rep.TruncatedTail {
					// Half of the batch reached the file: its whole lines
					// load, the torn one is cut off.
					t.Errorf("reopen after a partial write did not cut the torn line")
				}
				if err := g.Append(msgs[1]); err != nil {
					t.Fatalf("Append after reopen: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Append after a recovered failure: %v", err)
			}
			_, rep := open(t, path)
			if len(rep.Messages) != 2 || len(rep.SkippedLines) != 0 || rep.TruncatedTail {
				t.Errorf("reopen: %d messages, skipped %v, torn %v", len(rep.Messages), rep.SkippedLines, rep.TruncatedTail)
			}
		})
	}
}

func TestReportDoesNotAliasFile(t *testing.T) {
	path, _ := writeLines(t, sampleMessages())
	f, rep := open(t, path)
	mine := append(rep.Messages, user("caller's own", 1))
	if err := f.Append(user("appended", 2)); err != nil {
		t.Fatal(err)
	}
	if got := mine[len(mine)-1].(interface{ Text() string }).Text(); got != "caller's own" {
		t.Errorf("caller's slice overwritten by Append: %q", got)
	}
}
