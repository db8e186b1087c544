package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits of the file tools.
const (
	// ReadMaxBytes caps the text one read call returns; a longer window is
	// cut at a line boundary with a note giving the offset to continue
	// from. It stays under the Executor's default MaxTextChars (100,000).
	ReadMaxBytes = 90 << 10
	// LsMaxEntries caps the entries one ls call lists.
	LsMaxEntries = 1000
)

// binarySniffBytes is how much of a file read looks at for a NUL byte, the
// sign of a binary file.
const binarySniffBytes = 8 << 10

// FileTools returns the file tools confined to j: read, write, edit and
// ls. Each is flagged WorkspaceOnly and reaches files only through j.
func FileTools(j *Jail) []Tool {
	return []Tool{&readTool{j}, &writeTool{j}, &editTool{j}, &lsTool{j}}
}

// Compile-time checks that the file tools are tools.
var (
	_ Tool = (*readTool)(nil)
	_ Tool = (*writeTool)(nil)
	_ Tool = (*editTool)(nil)
	_ Tool = (*lsTool)(nil)
)

// pathProperty is the schema of the path argument every file tool takes.
const pathProperty = `"path":{"type":"string","description":"File path relative to the workspace, ` +
	`such as \"notes/todo.md\". Absolute paths, ~, .. leading out of the workspace and symlinks ` +
	`leading out are refused."}`

type readTool struct{ j *Jail }

// readArgs are the parsed arguments of one read call.
type readArgs struct {
	path string
	// offset is the 1-based first line; limit is 0 for no limit.
	offset, limit int
}

// readDetails is the Details of a read result.
type readDetails struct {
	Path string `json:"path"`
	// Lines is the number of lines in the file.
	Lines int `json:"lines"`
	// From and To are the 1-based lines shown, inclusive; 0 for an empty
	// file.
	From      int  `json:"from"`
	To        int  `json:"to"`
	Truncated bool `json:"truncated,omitempty"`
}

func (t *readTool) Spec() Spec {
	return Spec{
		Name: "read",
		Description: "Read a text file in the workspace. The result starts with a header " +
			"\"path (lines a–b of n)\" followed by the lines as they are. For a long file, read a " +
			"window with offset (the first line, counting from 1) and limit (how many lines). " +
			"At most " + strconv.Itoa(ReadMaxBytes>>10) + " KiB come back per call; when a read is " +
			"cut, the note at the end gives the offset to continue from. Binary files are refused.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` + pathProperty + `,` +
			`"offset":{"type":"integer","minimum":1,"description":"First line to read, counting from 1. Default 1."},` +
			`"limit":{"type":"integer","minimum":1,"description":"How many lines to read. Default: to the end of the file."}},` +
			`"required":["path"]}`),
		Flags: Flags{WorkspaceOnly: true},
	}
}

func (t *readTool) Execute(ctx context.Context, call Call, _ func(Result)) (Result, error) {
	args, err := parseReadArgs(call.Args)
	if err != nil {
		return Result{}, err
	}
	rel, err := t.j.Clean(args.path)
	if err != nil {
		return Result{}, err
	}
	f, err := t.j.openRel(args.path, rel)
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	return readWindow(ctx, rel, bufio.NewReaderSize(f, 64<<10), args)
}

func parseReadArgs(raw map[string]any) (readArgs, error) {
	args := readArgs{offset: 1}
	var err error
	if args.path, err = fsStringArg(raw, "path"); err != nil {
		return args, err
	}
	for _, a := range []struct {
		name string
		dst  *int
	}{{"offset", &args.offset}, {"limit", &args.limit}} {
		v, ok := present(raw, a.name)
		if !ok {
			continue
		}
		n, isInt := wholeNumber(v)
		if !isInt || n < 1 || n > 1<<31 {
			return args, fmt.Errorf("%s must be a whole number of at least 1; got %s", a.name, describeArg(v))
		}
		*a.dst = int(n)
	}
	return args, nil
}

// readWindow reads the lines args asks for from r, up to ReadMaxBytes, and
// counts all the file's lines for the header.
func readWindow(ctx context.Context, rel string, r *bufio.Reader, args readArgs) (Result, error) {
	if head, _ := r.Peek(binarySniffBytes); bytes.IndexByte(head, 0) >= 0 {
		return Result{}, fmt.Errorf("%q is a binary file; read shows text files only", rel)
	}
	var (
		out bytes.Buffer
		// line counts the lines started so far; last is the last one
		// shown; lineStart is where line begins in out.
		line, last, lineStart = 0, 0, 0
		cut, longLine         = false, false
		atLineEnd             = true
	)
	end := -1 // last line to show; -1 means to the end
	if args.limit > 0 {
		end = args.offset + args.limit - 1
	}
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 {
			if atLineEnd {
				line++
				lineStart = out.Len()
				if line%4096 == 0 && ctx.Err() != nil {
					return Result{}, ctx.Err()
				}
			}
			atLineEnd = chunk[len(chunk)-1] == '\n'
			if !cut && line >= args.offset && (end < 0 || line <= end) {
				switch {
				case out.Len()+len(chunk) <= ReadMaxBytes:
					out.Write(chunk)
					last = line
				case lineStart == 0:
					// This line alone is over the cap: show its start.
					out.Write(validPrefix(chunk, ReadMaxBytes-out.Len()))
					last, cut, longLine = line, true, true
				default:
					// Stop after the previous line, never mid-line.
					out.Truncate(lineStart)
					last, cut = line-1, true
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return Result{}, fmt.Errorf("reading %q: %w", rel, err)
		}
	}
	total := line
	d := readDetails{Path: rel, Lines: total, Truncated: cut}
	if total == 0 {
		return fsDetailed(rel+" (empty file)", d)
	}
	if args.offset > total {
		return Result{}, fmt.Errorf("offset %d is past the end of %q, which has %d lines", args.offset, rel, total)
	}
	d.From, d.To = args.offset, last
	var b strings.Builder
	fmt.Fprintf(&b, "%s (lines %d–%d of %d)\n", rel, d.From, d.To, total)
	b.WriteString(strings.ToValidUTF8(out.String(), "\uFFFD"))
	if cut && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch {
	case longLine && last < total:
		fmt.Fprintf(&b, "(line %d is longer than %d KiB and was cut; continue with offset=%d)", last, ReadMaxBytes>>10, last+1)
	case longLine:
		fmt.Fprintf(&b, "(line %d is longer than %d KiB and was cut)", last, ReadMaxBytes>>10)
	case cut:
		fmt.Fprintf(&b, "(output truncated at %d KiB after line %d; continue with offset=%d)", ReadMaxBytes>>10, last, last+1)
	}
	return fsDetailed(b.String(), d)
}

// validPrefix returns at most n bytes of b, not splitting a UTF-8
// sequence.
func validPrefix(b []byte, n int) []byte {
	if n >= len(b) {
		return b
	}
	for i := 1; i < utf8.UTFMax && n > 0 && !utf8.RuneStart(b[n]); i++ {
		n--
	}
	return b[:n]
}

type writeTool struct{ j *Jail }

func (t *writeTool) Spec() Spec {
	return Spec{
		Name: "write",
		Description: "Create a file in the workspace, or replace all of an existing file's contents. " +
			"Missing parent directories are created. To change part of a file, use edit instead. " +
			"Writing through a symlink, or to a hard-linked file, is refused.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` + pathProperty + `,` +
			`"content":{"type":"string","description":"The complete new contents of the file; may be empty."}},` +
			// content is checked in Execute: the executor counts "" as
			// missing, and an empty file is a fair thing to write.
			`"required":["path"]}`),
		// Workspace files (SOUL.md, AGENTS.md, HEARTBEAT.md) feed the
		// system prompt and heartbeats: only the owner writes them.
		Flags: Flags{WorkspaceOnly: true, OwnerOnly: true},
	}
}

func (t *writeTool) Execute(_ context.Context, call Call, _ func(Result)) (Result, error) {
	p, err := fsStringArg(call.Args, "path")
	if err != nil {
		return Result{}, err
	}
	content, err := fsStringArg(call.Args, "content")
	if err != nil {
		return Result{}, err
	}
	rel, err := t.j.Clean(p)
	if err != nil {
		return Result{}, err
	}
	_, statErr := t.j.root.Lstat(rel)
	if err := t.j.WriteFile(p, []byte(content)); err != nil {
		return Result{}, err
	}
	verb := "Replaced"
	if errors.Is(statErr, fs.ErrNotExist) {
		verb = "Created"
	}
	return fsDetailed(fmt.Sprintf("%s %s: wrote %d bytes.", verb, rel, len(content)),
		map[string]any{"path": rel, "bytes": len(content), "created": verb == "Created"})
}

type editTool struct{ j *Jail }

func (t *editTool) Spec() Spec {
	return Spec{
		Name: "edit",
		Description: "Replace text in an existing file in the workspace. old_string must match the file " +
			"exactly, whitespace and indentation included, and only once, unless replace_all is true; " +
			"include enough surrounding lines to make it unique. Read the file first to copy the text. " +
			"An empty new_string deletes old_string.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` + pathProperty + `,` +
			`"old_string":{"type":"string","description":"The exact text to replace."},` +
			`"new_string":{"type":"string","description":"The text to put in its place; may be empty."},` +
			`"replace_all":{"type":"boolean","description":"Replace every occurrence instead of requiring exactly one. Default false."}},` +
			`"required":["path","old_string"]}`),
		Flags: Flags{WorkspaceOnly: true, OwnerOnly: true},
	}
}

func (t *editTool) Execute(_ context.Context, call Call, _ func(Result)) (Result, error) {
	p, err := fsStringArg(call.Args, "path")
	if err != nil {
		return Result{}, err
	}
	oldS, err := fsStringArg(call.Args, "old_string")
	if err != nil {
		return Result{}, err
	}
	newS, err := fsStringArg(call.Args, "new_string")
	if err != nil {
		return Result{}, err
	}
	all := false
	if v, ok := present(call.Args, "replace_all"); ok {
		b, isBool := v.(bool)
		if !isBool {
			return Result{}, fmt.Errorf("replace_all must be true or false; got %s", describeArg(v))
		}
		all = b
	}
	if oldS == "" {
		return Result{}, errors.New("old_string must not be empty; to create or replace a whole file use write")
	}
	if oldS == newS {
		return Result{}, errors.New("old_string and new_string are the same; nothing to change")
	}
	rel, err := t.j.Clean(p)
	if err != nil {
		return Result{}, err
	}
	var n int
	err = t.j.UpdateFile(p, func(data []byte) ([]byte, error) {
		text := string(data)
		n = strings.Count(text, oldS)
		switch {
		case n == 0:
			return nil, fmt.Errorf("old_string was not found in %s (0 matches); read the file and copy the text exactly, whitespace included", rel)
		case n > 1 && !all:
			return nil, fmt.Errorf("old_string matches %d times in %s; include more surrounding text to make it unique, or set replace_all to true", n, rel)
		}
		return []byte(strings.ReplaceAll(text, oldS, newS)), nil
	})
	if err != nil {
		return Result{}, err
	}
	noun := "replacement"
	if n != 1 {
		noun = "replacements"
	}
	return fsDetailed(fmt.Sprintf("Edited %s: %d %s.", rel, n, noun), map[string]any{"path": rel, "replacements": n})
}

type lsTool struct{ j *Jail }

func (t *lsTool) Spec() Spec {
	return Spec{
		Name: "ls",
		Description: "List a directory in the workspace, sorted by name: directories end in \"/\", " +
			"files show their size, symlinks end in \"@\". At most " + strconv.Itoa(LsMaxEntries) +
			" entries per call. Without path, lists the workspace itself.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"path":{"type":"string","description":"Directory relative to the workspace. Default \".\", the workspace itself."}}}`),
		Flags: Flags{WorkspaceOnly: true},
	}
}

func (t *lsTool) Execute(_ context.Context, call Call, _ func(Result)) (Result, error) {
	p := "."
	if _, ok := present(call.Args, "path"); ok {
		var err error
		if p, err = fsStringArg(call.Args, "path"); err != nil {
			return Result{}, err
		}
		if p == "" {
			p = "."
		}
	}
	rel, err := t.j.Clean(p)
	if err != nil {
		return Result{}, err
	}
	entries, total, err := t.j.ReadDir(p, LsMaxEntries)
	if err != nil {
		return Result{}, err
	}
	var b strings.Builder
	switch total {
	case 0:
		fmt.Fprintf(&b, "%s/ is empty.", rel)
	case 1:
		fmt.Fprintf(&b, "%s/ (1 entry)", rel)
	default:
		fmt.Fprintf(&b, "%s/ (%d entries)", rel, total)
	}
	for _, fi := range entries {
		b.WriteByte('\n')
		name := strconv.Quote(fi.Name())
		if name[1:len(name)-1] == fi.Name() {
			name = fi.Name()
		}
		switch {
		case fi.IsDir():
			b.WriteString(name + "/")
		case fi.Mode()&fs.ModeSymlink != 0:
			b.WriteString(name + "@")
		case fi.Mode().IsRegular():
			fmt.Fprintf(&b, "%s  %d bytes", name, fi.Size())
		default:
			fmt.Fprintf(&b, "%s  (%s)", name, fi.Mode().Type())
		}
	}
	if total > len(entries) && total > LsMaxEntries {
		fmt.Fprintf(&b, "\n(%d more not shown; list a subdirectory to narrow it down)", total-len(entries))
	}
	return fsDetailed(b.String(), map[string]any{"path": rel, "entries": total, "shown": len(entries)})
}

// fsStringArg returns the string argument k, which must be present.
func fsStringArg(args map[string]any, k string) (string, error) {
	v, ok := present(args, k)
	if !ok {
		return "", errors.New(k + " required")
	}
	s, isString := v.(string)
	if !isString {
		return "", fmt.Errorf("%s must be a string; got %s", k, describeArg(v))
	}
	return s, nil
}

// fsDetailed is a text result with details encoded as JSON.
func fsDetailed(text string, details any) (Result, error) {
	raw, err := json.Marshal(details)
	if err != nil {
		return Result{}, fmt.Errorf("encoding details: %w", err)
	}
	res := TextResult(text)
	res.Details = raw
	return res, nil
}
