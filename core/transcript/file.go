package transcript

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/switchboardhq/switchboard/core"
)

// Sentinel errors callers branch on.
var (
	// ErrInvalidSessionID is wrapped by Path and ValidateSessionID when a
	// session id is not a safe file name.
	ErrInvalidSessionID = errors.New("transcript: invalid session id")
	// ErrClosed is returned by Append after Close.
	ErrClosed = errors.New("transcript: file is closed")
	// ErrUnserializable is wrapped by Append when a message cannot be
	// written as one transcript line; nothing is written then.
	ErrUnserializable = errors.New("transcript: message cannot be serialized")
	// ErrBroken is wrapped by Append after an earlier write or fsync failed
	// in a way that leaves the end of the file uncertain. Close the File
	// and Open it again: the load repairs a torn tail.
	ErrBroken = errors.New("transcript: file needs reopening after a failed write")
)

// maxSessionIDLen keeps "<id>.jsonl.bak-<unix ms>" under the 255-byte file
// name limit of common file systems.
const maxSessionIDLen = 128

// ValidateSessionID reports whether id can name a transcript file: 1 to 128
// bytes of ASCII letters, digits, '.', '_' and '-', starting with a letter
// or digit, so it can never climb out of the sessions directory or hide as
// a dot file. OpenClaw's ids (UUIDs, "<uuid>-topic-<id>") all pass.
func ValidateSessionID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: it is empty", ErrInvalidSessionID)
	}
	if len(id) > maxSessionIDLen {
		return fmt.Errorf("%w: it is %d bytes long, the limit is %d", ErrInvalidSessionID, len(id), maxSessionIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if i == 0 && !alnum {
			return fmt.Errorf("%w %q: it must start with a letter or digit", ErrInvalidSessionID, id)
		}
		if !alnum && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("%w %q: byte %d (%q) is not a letter, digit, '.', '_' or '-'", ErrInvalidSessionID, id, i, c)
		}
	}
	return nil
}

// Path returns where the transcript of sessionID lives:
// <stateDir>/agents/<agentId>/sessions/<sessionId>.jsonl (the layout of
// seed 000 §6 under our state directory). agentID is normalized with
// core.NormalizeAgentID, so it is always a safe path segment; a sessionID
// that is not a safe file name is an error wrapping ErrInvalidSessionID.
func Path(stateDir, agentID, sessionID string) (string, error) {
	if err := ValidateSessionID(sessionID); err != nil {
		return "", err
	}
	return filepath.Join(stateDir, "agents", core.NormalizeAgentID(agentID), "sessions", sessionID+".jsonl"), nil
}

// NewSessionID returns a fresh random session id in the UUID version 4
// form OpenClaw uses (crypto.randomUUID), such as
// "3b241101-e2bb-4255-8caf-4136c566a962".
func NewSessionID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])  // crypto/rand.Read never fails; it crashes the program instead.
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// Options configures Open. The zero value is the production setting.
type Options struct {
	// Logger receives the repair warnings (torn tail dropped, corrupt lines
	// skipped) and write failures. Nothing logged contains message content,
	// only line numbers and sizes. Nil discards.
	Logger *slog.Logger
	// NoSync skips every fsync: after each Append and after the repairs of
	// Open. It exists for tests and benchmarks only: with it, a machine
	// crash can lose appended messages that Append reported as written, or
	// a backup made before a repair. Never set it in production.
	NoSync bool
}

// File is an open transcript: the messages loaded by Open plus those
// appended since, and the file descriptor appends go to. A File is safe for
// concurrent use. One process should have one File per path; across
// processes, the dispatcher's session lane is what keeps a session to one
// writer.
type File struct {
	path   string
	log    *slog.Logger
	noSync bool

	mu     sync.Mutex
	fd     handle
	msgs   []core.Message
	size   int64 // bytes on disk that hold whole lines
	held   int64 // bytes of the lines whose messages msgs still holds
	broken error
	closed bool
}

// handle is what a File needs of its *os.File after the load; tests put a
// failing one in its place.
type handle interface {
	Write(b []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Open opens the transcript at path for reading and appending, creating
// its directory (0700) and the file (0600) when they do not exist, and
// loads it with crash repair (see the package documentation). The
// LoadReport says what the load found and repaired; it is returned with
// the File, and is also filled as far as the load got when err is not nil.
func Open(path string, opts Options) (*File, LoadReport, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("transcript", path)
	fd, err := openOrCreate(path, opts.NoSync)
	if err != nil {
		return nil, LoadReport{}, fmt.Errorf("transcript: open %s: %w", path, err)
	}
	rep, err := load(fd, path, log, opts.NoSync)
	if err != nil {
		_ = fd.Close()
		return nil, rep, err
	}
	f := &File{
		path:   path,
		log:    log,
		noSync: opts.NoSync,
		fd:     fd,
		msgs:   rep.Messages,
		size:   rep.Bytes,
		held:   rep.Bytes,
	}
	// The report's slice must not share spare capacity with the File's, or
	// an append by the caller and a later Append would overwrite each other.
	rep.Messages = rep.Messages[:len(rep.Messages):len(rep.Messages)]
	f.release()
	return f, rep, nil
}

// openOrCreate opens path for reading and appending. When it creates the
// file, or directories on the way to it, it fsyncs the directories that got
// a new entry, so the first durable Append is not lost with its directory
// entry on a power cut.
func openOrCreate(path string, noSync bool) (*os.File, error) {
	const flags = os.O_RDWR | os.O_APPEND
	fd, err := os.OpenFile(path, flags, 0)
	if !errors.Is(err, os.ErrNotExist) {
		return fd, err
	}
	dir := filepath.Dir(path)
	created, err := mkdirs(dir)
	if err != nil {
		return nil, err
	}
	fd, err = os.OpenFile(path, flags|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if !noSync {
		for _, d := range created {
			syncDir(filepath.Dir(d))
		}
		syncDir(dir)
	}
	return fd, nil
}

// mkdirs is os.MkdirAll with mode 0700 that also returns the directories
// it created, outermost first.
func mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) || d == filepath.Dir(d) {
			return nil, err
		}
		missing = append(missing, d)
	}
	var created []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return created, err
		}
		created = append(created, missing[i])
	}
	return created, nil
}

// syncDir fsyncs a directory so that its new entries survive a power cut.
// It is best effort: not every platform can fsync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// Path returns the file's path as given to Open.
func (f *File) Path() string { return f.path }

// Size returns the bytes of whole lines on disk.
func (f *File) Size() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.size
}

// Held returns the bytes of the lines whose messages the File holds in
// memory (see Messages): a measure of its memory (about 1.15× it), for
// caches that bound memory. It is Size until the transcript is compacted.
func (f *File) Held() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

// Messages returns the loaded and appended messages in order. The slice is
// a snapshot whose capacity is capped, so appending to it never reaches
// the File, and later Appends do not change it. The messages themselves are
// shared with the File and with every other caller: treat them as
// read-only (the history functions of this package never modify theirs,
// they copy what they change).
//
// Once the transcript holds a core.CompactionSummaryMessage, the messages
// before the latest one's FirstKeptIndex are nil: no context is built from
// them again (ContextMessages, SplitForCompaction), so the File lets them
// go and its memory stays bounded by the context window however long the
// session runs. Indexes keep their meaning. The whole history stays on
// disk; Read loads it.
func (f *File) Messages() []core.Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.msgs[:len(f.msgs):len(f.msgs)]
}

// Append writes msgs at the end of the transcript, one line each, and then
// fsyncs (unless Options.NoSync). All lines go out in a single write call
// on a file opened with O_APPEND, so a crash leaves at most one torn line,
// the last, which the next Open drops. Every message is encoded before
// anything is written: if one cannot be serialized (a nil message, invalid
// raw JSON in ToolResultMessage.Details, a NaN cost, a custom message type
// whose JSON does not load back), Append returns an error wrapping
// ErrUnserializable and writes nothing. Appending no messages is a no-op.
func (f *File) Append(msgs ...core.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	var buf []byte
	for i, m := range msgs {
		var err error
		if buf, err = appendLine(buf, m); err != nil {
			return fmt.Errorf("%w: message %d of %d: %w", ErrUnserializable, i+1, len(msgs), err)
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return ErrClosed
	case f.broken != nil:
		return fmt.Errorf("%w (%s): %w", ErrBroken, f.path, f.broken)
	}
	n, err := f.fd.Write(buf)
	if err != nil {
		return f.failWrite(n, err)
	}
	if !f.noSync {
		if err := f.fd.Sync(); err != nil {
			// After a failed fsync the kernel may have dropped the dirty
			// pages and marked them clean; what is on disk is unknown.
			f.broken = err
			f.log.Error("transcript: fsync failed; the file must be reopened", "err", err)
			return fmt.Errorf("transcript: append to %s: fsync: %w", f.path, err)
		}
	}
	f.size += int64(n)
	f.held += int64(n)
	f.msgs = append(f.msgs, msgs...)
	for _, m := range msgs {
		if _, ok := m.(*core.CompactionSummaryMessage); ok {
			f.release()
			break
		}
	}
	return nil
}

// release lets go of the messages before the latest compaction entry's
// FirstKeptIndex (see Messages). It builds a new slice rather than
// clearing the old one in place, because earlier snapshots (and Open's
// LoadReport) share the old one's array. The bytes held are measured
// again by encoding what is kept: a compaction is rare and keeps little.
func (f *File) release() {
	if kept, held, ok := releaseCompacted(f.msgs); ok {
		f.msgs, f.held = kept, held
	}
}

// releaseCompacted returns msgs with the messages before the latest
// compaction entry's FirstKeptIndex set to nil, in a new slice, and the
// bytes of the lines kept; ok is false when there is nothing to let go.
func releaseCompacted(msgs []core.Message) (kept []core.Message, held int64, ok bool) {
	k := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if e, ok := msgs[i].(*core.CompactionSummaryMessage); ok && e != nil {
			k = min(max(e.FirstKeptIndex, 0), i)
			break
		}
	}
	if k <= 0 || msgs[k-1] == nil {
		return nil, 0, false // nothing before the kept messages, or already let go
	}
	kept = make([]core.Message, len(msgs), len(msgs)+len(msgs)/4)
	copy(kept[k:], msgs[k:])
	for _, m := range kept[k:] {
		if b, err := encodeMessage(m); err == nil {
			held += int64(len(b)) + 1
		}
	}
	return kept, held, true
}

// failWrite handles a write that returned an error after writing n bytes.
// A partial line at the end would glue itself to the next append, so it is
// cut off again; if that fails too, the File refuses further appends.
func (f *File) failWrite(n int, err error) error {
	werr := fmt.Errorf("transcript: append to %s: %w", f.path, err)
	if n == 0 {
		return werr
	}
	if terr := f.fd.Truncate(f.size); terr != nil {
		f.broken = err
		f.log.Error("transcript: partial write could not be undone; the file must be reopened",
			"written", n, "err", err, "truncateErr", terr)
		return errors.Join(werr, fmt.Errorf("transcript: undo partial write: %w", terr))
	}
	f.log.Warn("transcript: partial write undone", "written", n, "err", err)
	return werr
}

// Close closes the file. Messages stays usable; Append returns ErrClosed.
// Closing twice is not an error.
func (f *File) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	if err := f.fd.Close(); err != nil {
		return fmt.Errorf("transcript: close %s: %w", f.path, err)
	}
	return nil
}

// appendLine appends m as one JSON line ending in '\n'. The line is checked
// by decoding it again, so nothing is written that the next Open would have
// to skip.
func appendLine(buf []byte, m core.Message) ([]byte, error) {
	line, err := encodeMessage(m)
	if err != nil {
		return buf, err
	}
	if bytes.IndexByte(line, '\n') >= 0 || bytes.IndexByte(line, '\r') >= 0 {
		// Valid JSON has raw line breaks only between tokens (a string
		// holds them escaped), so compacting removes every one of them.
		var c bytes.Buffer
		if err := json.Compact(&c, line); err != nil {
			return buf, err
		}
		line = c.Bytes()
	}
	if _, err := core.UnmarshalMessage(line); err != nil {
		return buf, fmt.Errorf("it would not load back: %w", err)
	}
	buf = append(buf, line...)
	return append(buf, '\n'), nil
}

// encodeMessage writes m with its own MarshalJSON, which for the core types
// is the fast appender without HTML escaping; a custom message type must
// implement json.Marshaler (core.Message says so) or is encoded with
// json.Marshal.
func encodeMessage(m core.Message) ([]byte, error) {
	if m == nil {
		return nil, errors.New("nil message")
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("nil %T", m)
	}
	if jm, ok := m.(json.Marshaler); ok {
		b, err := jm.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("%T.MarshalJSON returned invalid JSON", m)
		}
		return b, nil
	}
	return json.Marshal(m)
}
