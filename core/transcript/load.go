package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// LoadReport says what Open found in a transcript and what it repaired.
type LoadReport struct {
	// Messages are the loaded messages in file order: every line that
	// decodes, plus the lines recovered (see RecoveredLines). Lines of
	// unknown role are kept as *core.RawMessage.
	Messages []core.Message
	// SkippedLines are the 1-based numbers of the lines that were skipped
	// because they are not a message: invalid JSON, or JSON that
	// core.UnmarshalMessage rejects. They stay in the file untouched.
	SkippedLines []int
	// RecoveredLines are the 1-based numbers of the lines whose message was
	// loaded only after escaping raw control characters inside its strings;
	// a string holding a raw line break spans several lines, and the number
	// is that of the first. The file keeps them as they are.
	RecoveredLines []int
	// TruncatedTail reports that the last line was torn (no trailing
	// newline and not a message, as a crash in the middle of a write
	// leaves it) and was cut off after the file was copied to BackupPath.
	TruncatedTail bool
	// TornBytes is the size of the torn line that was cut off.
	TornBytes int64
	// AddedNewline reports that the file did not end in a newline after a
	// complete line and one was appended, so the next line starts on a line
	// of its own.
	AddedNewline bool
	// BackupPath is the copy of the file as it was before the torn tail was
	// cut off, "<file>.bak-<unix ms>"; empty when nothing was cut.
	BackupPath string
	// Bytes is the size of the file after the load and its repairs, where
	// the next Append starts.
	Bytes int64
}

// readChunk is how much of the file is read and decoded at a time; a longer
// line grows the buffer to hold it whole. A variable only so that tests can
// put chunk boundaries everywhere.
var readChunk int64 = 1 << 20

const (
	// parallelMinLines is the fewest lines worth decoding on several cores.
	parallelMinLines = 64
	// decodeBatch is how many lines a decoding goroutine takes at a time.
	decodeBatch = 16
	// maxJoinLines bounds how many physical lines one recovered message may
	// span when its strings hold raw line breaks.
	maxJoinLines = 64
	// maxLoggedLines bounds the line numbers listed in one log record.
	maxLoggedLines = 20
)

// load reads the whole file through fd, decodes it and repairs its end.
func load(fd *os.File, path string, log *slog.Logger, noSync bool) (LoadReport, error) {
	sync := func(f *os.File) error {
		if noSync {
			return nil
		}
		return f.Sync()
	}
	st, err := fd.Stat()
	if err != nil {
		return LoadReport{}, fmt.Errorf("transcript: open %s: %w", path, err)
	}
	size := st.Size()
	ld := loader{}
	if err := ld.read(io.NewSectionReader(fd, 0, size), size); err != nil {
		return LoadReport{}, fmt.Errorf("transcript: read %s: %w", path, err)
	}
	rep := LoadReport{
		Messages:       ld.msgs,
		SkippedLines:   ld.skipped,
		RecoveredLines: ld.recovered,
		Bytes:          size,
	}
	if len(rep.SkippedLines) > 0 {
		log.Warn("transcript: skipped lines that are not messages; they stay in the file",
			"count", len(rep.SkippedLines), "lines", firstLines(rep.SkippedLines))
	}
	if len(rep.RecoveredLines) > 0 {
		log.Warn("transcript: loaded lines with raw control characters in their strings",
			"count", len(rep.RecoveredLines), "lines", firstLines(rep.RecoveredLines))
	}

	switch {
	case ld.tornAt >= 0:
		backup, err := backupFile(fd, path, size, noSync)
		if err != nil {
			return rep, fmt.Errorf("transcript: %s has a torn last line; back it up before cutting it off: %w", path, err)
		}
		rep.BackupPath = backup
		if err := fd.Truncate(ld.tornAt); err != nil {
			return rep, fmt.Errorf("transcript: cut the torn last line of %s (backup at %s): %w", path, backup, err)
		}
		if err := sync(fd); err != nil {
			return rep, fmt.Errorf("transcript: cut the torn last line of %s (backup at %s): fsync: %w", path, backup, err)
		}
		rep.TruncatedTail = true
		rep.TornBytes = size - ld.tornAt
		rep.Bytes = ld.tornAt
		log.Warn("transcript: dropped a torn last line (crash during a write)",
			"line", ld.tornLine, "bytes", rep.TornBytes, "backup", backup)
	case ld.needNewline:
		if _, err := fd.Write([]byte{'\n'}); err != nil {
			return rep, fmt.Errorf("transcript: end the last line of %s: %w", path, err)
		}
		if err := sync(fd); err != nil {
			return rep, fmt.Errorf("transcript: end the last line of %s: fsync: %w", path, err)
		}
		rep.AddedNewline = true
		rep.Bytes = size + 1
		log.Info("transcript: added the missing newline after the last line")
	}
	return rep, nil
}

func firstLines(lines []int) []int {
	return lines[:min(len(lines), maxLoggedLines)]
}

// backupFile copies the first size bytes of fd to a new file next to path,
// "<path>.bak-<unix ms>" (with "-2", "-3", ... if that exists), and makes
// the copy durable before the original is changed.
func backupFile(fd *os.File, path string, size int64, noSync bool) (string, error) {
	base := path + ".bak-" + strconv.FormatInt(time.Now().UnixMilli(), 10)
	name := base
	var out *os.File
	for i := 2; ; i++ {
		var err error
		out, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || i > 1000 {
			return "", err
		}
		name = base + "-" + strconv.Itoa(i)
	}
	_, err := io.Copy(out, io.NewSectionReader(fd, 0, size))
	if err == nil && !noSync {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	if !noSync {
		syncDir(filepath.Dir(name))
	}
	return name, nil
}

// lineState classifies one decoded line.
type lineState uint8

const (
	lineOK       lineState = iota // a message
	lineBlank                     // only white space
	lineRejected                  // valid JSON, but not a message
	lineInvalid                   // not valid JSON; maybe recoverable
)

type lineResult struct {
	msg   core.Message
	state lineState
}

// pendingLine is an invalid or blank line kept until the next good line,
// because a string with raw line breaks spreads one message over several.
type pendingLine struct {
	data  []byte
	no    int   // 1-based line number
	off   int64 // file offset of the line's first byte
	blank bool
	tail  bool // the last line, which has no newline
}

// loader holds the state of one read.
type loader struct {
	msgs      []core.Message
	skipped   []int
	recovered []int
	pending   []pendingLine
	lineNo    int

	// Outcome for the last line when it has no newline.
	tornAt      int64 // offset to cut the file at, or -1
	tornLine    int
	needNewline bool

	lines   [][]byte
	offs    []int64
	results []lineResult
}

// read decodes every line from r. Complete lines are decoded a chunk at a
// time, on several cores when there are enough of them; the unterminated
// last line, if any, is handled after.
func (ld *loader) read(r io.Reader, size int64) error {
	ld.tornAt = -1
	// One byte more than the file, so a small file is read, and its EOF
	// seen, in one go.
	buf := make([]byte, max(1, min(size+1, readChunk)))
	start, end := 0, 0
	var base int64 // file offset of buf[start]
	for eof := false; !eof; {
		if start > 0 {
			end = copy(buf, buf[start:end])
			start = 0
		}
		if end == len(buf) {
			buf = append(buf, make([]byte, len(buf))...)
		}
		n, err := io.ReadFull(r, buf[end:])
		end += n
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			eof = true
		case err != nil:
			return err
		}
		last := bytes.LastIndexByte(buf[start:end], '\n')
		if last < 0 {
			continue
		}
		ld.chunk(buf[start:start+last+1], base)
		base += int64(last + 1)
		start += last + 1
	}
	ld.tail(buf[start:end], base)
	return nil
}

// chunk decodes the complete lines of c, which starts at file offset base
// and ends with a newline.
func (ld *loader) chunk(c []byte, base int64) {
	ld.lines, ld.offs = ld.lines[:0], ld.offs[:0]
	for off := 0; off < len(c); {
		i := bytes.IndexByte(c[off:], '\n')
		ld.lines = append(ld.lines, c[off:off+i])
		ld.offs = append(ld.offs, base+int64(off))
		off += i + 1
	}
	if base == 0 {
		ld.lines[0] = bytes.TrimPrefix(ld.lines[0], utf8BOM)
	}
	if cap(ld.results) < len(ld.lines) {
		ld.results = make([]lineResult, len(ld.lines))
	}
	res := ld.results[:len(ld.lines)]
	decodeAll(ld.lines, res)
	for i, r := range res {
		ld.lineNo++
		ld.take(r, ld.lines[i], ld.offs[i], false)
		res[i] = lineResult{} // drop the reference for the GC
	}
}

// utf8BOM starts a file some editors save; JSON does not allow it, so it is
// ignored before the first line.
var utf8BOM = []byte("\ufeff")

// tail handles the last line when the file does not end with a newline.
func (ld *loader) tail(t []byte, off int64) {
	if off == 0 && bytes.HasPrefix(t, utf8BOM) {
		// Only a mark: end its line like one of white space.
		t = t[len(utf8BOM):]
		ld.needNewline = len(t) == 0
	}
	if len(t) > 0 {
		ld.lineNo++
		ld.take(decodeLine(t), t, off, true)
	}
	ld.flush()
}

// take files one decoded line, in order.
func (ld *loader) take(r lineResult, line []byte, off int64, tail bool) {
	switch r.state {
	case lineOK, lineRejected:
		ld.flush()
		if r.state == lineOK {
			ld.msgs = append(ld.msgs, r.msg)
		} else {
			ld.skipped = append(ld.skipped, ld.lineNo)
		}
		ld.needNewline = tail
	case lineBlank:
		if len(ld.pending) > 0 {
			ld.pending = append(ld.pending, pendingLine{data: bytes.Clone(line), no: ld.lineNo, off: off, blank: true, tail: tail})
		} else {
			// White space after the last newline: end it, so the next
			// append starts a line of its own.
			ld.needNewline = tail
		}
	case lineInvalid:
		ld.pending = append(ld.pending, pendingLine{data: bytes.Clone(line), no: ld.lineNo, off: off, tail: tail})
	}
}

// flush settles the pending lines: each run that forms a message once raw
// control characters in its strings are escaped is loaded, every other
// invalid line is skipped, and an unterminated last line that stays
// invalid is marked torn.
func (ld *loader) flush() {
	p := ld.pending
	for s := 0; s < len(p); {
		if m, e, ok := recoverMessage(p, s); ok {
			ld.msgs = append(ld.msgs, m)
			ld.recovered = append(ld.recovered, p[s].no)
			ld.needNewline = p[e].tail
			s = e + 1
			continue
		}
		switch {
		case p[s].tail && p[s].blank:
			ld.needNewline = true
		case p[s].tail:
			ld.tornAt, ld.tornLine = p[s].off, p[s].no
		case !p[s].blank:
			ld.skipped = append(ld.skipped, p[s].no)
		}
		s++
	}
	clear(p)
	ld.pending = p[:0]
}

// recoverMessage tries to read a message from p[s:], joining the following
// lines while the text so far ends inside a string (a raw line break in a
// string), and escaping the raw control characters inside strings. It
// returns the message and the index of the last line it used.
func recoverMessage(p []pendingLine, s int) (core.Message, int, bool) {
	if p[s].blank {
		return nil, s, false
	}
	acc := p[s].data
	e := s
	var st stringState
	st.scan(acc)
	for st.in && e+1 < len(p) && e-s+1 < maxJoinLines {
		e++
		if e == s+1 {
			acc = bytes.Clone(acc)
		}
		acc = append(append(acc, '\n'), p[e].data...)
		st.scan(p[e].data)
	}
	fixed, changed := escapeControlInStrings(acc)
	if !changed {
		return nil, s, false
	}
	m, err := core.UnmarshalMessage(fixed)
	if err != nil {
		return nil, s, false
	}
	return m, e, true
}

// decodeAll decodes lines into res, on up to GOMAXPROCS goroutines that
// are all done when it returns.
func decodeAll(lines [][]byte, res []lineResult) {
	workers := min(runtime.GOMAXPROCS(0), len(lines)/parallelMinLines)
	if workers <= 1 {
		for i, l := range lines {
			res[i] = decodeLine(l)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(decodeBatch)) - decodeBatch
				if lo >= len(lines) {
					return
				}
				for i := lo; i < min(lo+decodeBatch, len(lines)); i++ {
					res[i] = decodeLine(lines[i])
				}
			}
		})
	}
	wg.Wait()
}

// decodeLine decodes one line without its newline.
func decodeLine(l []byte) lineResult {
	if len(bytes.TrimSpace(l)) == 0 {
		return lineResult{state: lineBlank}
	}
	m, err := core.UnmarshalMessage(l)
	switch {
	case err == nil:
		return lineResult{msg: m, state: lineOK}
	case json.Valid(l):
		return lineResult{state: lineRejected}
	default:
		return lineResult{state: lineInvalid}
	}
}

// stringState follows whether JSON text read so far is inside a string,
// so that joining lines scans each byte once.
type stringState struct {
	in, esc bool
}

// scan advances the state over the next line, b. The line break joining it
// to the text before ends any escape that text left open.
func (s *stringState) scan(b []byte) {
	s.esc = false
	for _, c := range b {
		switch {
		case s.esc:
			s.esc = false
		case s.in && c == '\\':
			s.esc = true
		case c == '"':
			s.in = !s.in
		}
	}
}

// escapeControlInStrings returns b with every raw control character
// (below 0x20) inside a JSON string replaced by its escape, and whether
// there was any. JSON forbids them there; a writer that forgot to escape a
// line break is the usual cause (OpenClaw #69846).
func escapeControlInStrings(b []byte) ([]byte, bool) {
	var out []byte
	in, esc := false, false
	for i, c := range b {
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case in && c < 0x20:
			if out == nil {
				out = append(make([]byte, 0, len(b)+16), b[:i]...)
			}
			out = appendEscape(out, c)
			continue
		}
		if out != nil {
			out = append(out, c)
		}
	}
	if out == nil {
		return b, false
	}
	return out, true
}

func appendEscape(b []byte, c byte) []byte {
	switch c {
	case '\n':
		return append(b, '\\', 'n')
	case '\r':
		return append(b, '\\', 'r')
	case '\t':
		return append(b, '\\', 't')
	case '\b':
		return append(b, '\\', 'b')
	case '\f':
		return append(b, '\\', 'f')
	}
	const hex = "0123456789abcdef"
	return append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}
