package tools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// ErrJail is what every JailError matches with errors.Is: the jail refused
// a path, as opposed to the file being missing or unreadable.
var ErrJail = errors.New("path refused by the workspace jail")

// JailError is a path the jail refused, with the rule it broke in words a
// model can act on.
type JailError struct {
	// Path is the path as the model gave it.
	Path string
	// Reason names the rule, such as "absolute paths are not allowed; give
	// a path inside the workspace".
	Reason string
}

// Error returns `path "<Path>": <Reason>`.
func (e *JailError) Error() string { return fmt.Sprintf("path %q: %s", e.Path, e.Reason) }

// Is reports whether target is ErrJail.
func (e *JailError) Is(target error) bool { return target == ErrJail }

// Reasons of JailError. They are sentences for the model, so each says
// what to do instead.
const (
	reasonEmpty       = "empty path; give a path inside the workspace, such as \"notes.txt\""
	reasonNUL         = "NUL bytes are not allowed in paths"
	reasonAbsolute    = "absolute paths are not allowed; give a path inside the workspace"
	reasonBackslash   = "backslashes are not allowed; separate directories with /"
	reasonHome        = "~ (the home directory) is not allowed; give a path relative to the workspace"
	reasonPercent     = "percent-encoded dot segments or separators (such as %2e%2e) are not allowed; write the path plainly"
	reasonDotDot      = ".. leads outside the workspace; give a path inside it"
	reasonLinkDotDot  = "a symlink followed by .. is not allowed; name the directory directly"
	reasonEscapes     = "the path leads outside the workspace through a symlink"
	reasonWriteLink   = "the path is a symlink, and writing through symlinks is not allowed; write to a regular file instead"
	reasonHardLink    = "hard-linked files are not allowed: it may be linked from outside the workspace"
	reasonNotRegular  = "not a regular file"
	reasonIsDir       = "is a directory; give a file path"
	reasonOutsideReal = "the file opened is outside the workspace"
)

// tempPrefix starts the names of the temporary files WriteFile renames into
// place.
const tempPrefix = ".sbtmp-"

// Jail confines file access to one workspace directory. Every operation
// goes through an os.Root opened on that directory, so the OS refuses any
// lookup, symlinks included, that would leave it; the jail adds the rules
// os.Root does not have: model paths are checked before use (see Clean),
// writes never go through a symlink, hard-linked files are refused, and
// files read are checked against the workspace's real path where the OS
// tells it. A Jail is safe for concurrent use.
type Jail struct {
	root *os.Root
	// dir is the workspace's absolute path as opened; real is the same
	// with symlinks resolved, for the realpath check.
	dir, real string
	// mu serializes writes, so one edit's read-modify-write does not lose
	// another's change.
	mu sync.Mutex
}

// OpenJail opens dir (created 0700 if missing) as an os.Root.
func OpenJail(dir string) (*Jail, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("jail: %w", err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("jail: creating workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("jail: resolving workspace: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("jail: opening workspace: %w", err)
	}
	return &Jail{root: root, dir: abs, real: real}, nil
}

// Close releases the workspace directory handle.
func (j *Jail) Close() error { return j.root.Close() }

// Dir returns the workspace's absolute path.
func (j *Jail) Dir() string { return j.dir }

// RealDir returns the workspace's absolute path with symlinks resolved,
// the prefix every real path inside it has.
func (j *Jail) RealDir() string { return j.real }

// Clean validates a model-supplied path and returns its root-relative,
// slash-separated, lexically clean form ("." for the workspace itself), or
// a *JailError naming the rule it broke. It refuses empty paths, NUL bytes,
// absolute paths (Unix or Windows), "~", backslashes, percent-encoded dot
// segments or separators (refused, never decoded), ".." that would leave
// the workspace even for a moment ("../ws2/x" from ws), and ".." right
// after a symlink, whose meaning the lexical form would change.
func (j *Jail) Clean(p string) (string, error) {
	refuse := func(reason string) (string, error) { return "", &JailError{Path: p, Reason: reason} }
	switch {
	case p == "":
		return refuse(reasonEmpty)
	case strings.IndexByte(p, 0) >= 0:
		return refuse(reasonNUL)
	case isAbsolute(p):
		return refuse(reasonAbsolute)
	case strings.IndexByte(p, '\\') >= 0:
		return refuse(reasonBackslash)
	case strings.HasPrefix(p, "~"):
		return refuse(reasonHome)
	}
	var kept []string
	for seg := range strings.SplitSeq(p, "/") {
		if encodesDotOrSeparator(seg) {
			return refuse(reasonPercent)
		}
		switch seg {
		case "", ".":
		case "..":
			if len(kept) == 0 {
				return refuse(reasonDotDot)
			}
			// The OS resolves "link/.." from the link's target, not from
			// the directory holding the link.
			fi, err := j.root.Lstat(path.Join(kept...))
			switch {
			case err == nil && fi.Mode()&fs.ModeSymlink != 0:
				return refuse(reasonLinkDotDot)
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return "", j.wrap(p, "checking", err)
			}
			kept = kept[:len(kept)-1]
		default:
			kept = append(kept, seg)
		}
	}
	if len(kept) == 0 {
		return ".", nil
	}
	return path.Join(kept...), nil
}

// isAbsolute reports a Unix absolute path, a Windows drive or UNC path.
func isAbsolute(p string) bool {
	if p[0] == '/' || p[0] == '\\' {
		return true
	}
	return len(p) >= 2 && p[1] == ':' && ('a' <= p[0]|0x20 && p[0]|0x20 <= 'z')
}

// encodesDotOrSeparator reports a segment that percent-decodes, once or
// repeatedly, to something holding a "." or ".." element, a separator or
// a NUL: something a URL-minded layer might decode into a traversal.
func encodesDotOrSeparator(seg string) bool {
	for range 4 {
		if !strings.Contains(seg, "%") {
			return false
		}
		dec, err := url.PathUnescape(seg)
		if err != nil || dec == seg {
			return false
		}
		if strings.ContainsAny(dec, "/\\\x00") || dec == "." || dec == ".." {
			return true
		}
		seg = dec
	}
	return true
}

// Open opens the regular file p for reading. It refuses, with a
// *JailError, what Clean refuses, anything but a regular file, a file with
// more than one hard link, and a file the OS reports is outside the
// workspace; symlinks inside the workspace are followed.
func (j *Jail) Open(p string) (*os.File, error) {
	rel, err := j.Clean(p)
	if err != nil {
		return nil, err
	}
	return j.openRel(p, rel)
}

// openRel is Open of the clean path rel; p is for errors.
func (j *Jail) openRel(p, rel string) (*os.File, error) {
	fi, err := j.root.Stat(rel)
	if err != nil {
		return nil, j.wrap(p, "reading", err)
	}
	if fi.IsDir() {
		return nil, &JailError{Path: p, Reason: reasonIsDir}
	}
	if !fi.Mode().IsRegular() {
		return nil, &JailError{Path: p, Reason: reasonNotRegular}
	}
	// Non-blocking, so a FIFO swapped in after the Stat cannot hang the
	// open; it is refused below.
	f, err := j.root.OpenFile(rel, os.O_RDONLY|openNonBlock, 0)
	if err != nil {
		return nil, j.wrap(p, "reading", err)
	}
	if err := j.checkOpened(p, f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkOpened checks the file actually opened: regular, one link, and
// inside the workspace's real path where the OS can say.
func (j *Jail) checkOpened(p string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return j.wrap(p, "reading", err)
	}
	if !fi.Mode().IsRegular() {
		return &JailError{Path: p, Reason: reasonNotRegular}
	}
	if hardLinked(fi) {
		return &JailError{Path: p, Reason: reasonHardLink}
	}
	if real, ok := fdPath(f); ok && !within(j.real, real) {
		return &JailError{Path: p, Reason: reasonOutsideReal}
	}
	return nil
}

// within reports whether p is dir or below it, with a separator boundary
// so "/ws2" is not under "/ws".
func within(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// ReadFile returns the contents of the regular file p, with the checks of
// Open.
func (j *Jail) ReadFile(p string) ([]byte, error) {
	rel, err := j.Clean(p)
	if err != nil {
		return nil, err
	}
	return j.readRel(p, rel)
}

func (j *Jail) readRel(p, rel string) ([]byte, error) {
	f, err := j.openRel(p, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, j.wrap(p, "reading", err)
	}
	return data, nil
}

// WriteFile creates or replaces the file p with data, atomically: it
// writes a temporary file in the same directory and renames it over p, so
// a reader sees the old or the new contents, and the rename replaces the
// directory entry rather than following it. Missing parents are created
// 0700; the file is 0600. A p that is a symlink (dangling or not), a
// directory or a hard-linked file is refused with a *JailError.
func (j *Jail) WriteFile(p string, data []byte) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	rel, err := j.Clean(p)
	if err != nil {
		return err
	}
	return j.writeLocked(p, rel, data)
}

// UpdateFile replaces the contents of the existing file p with what fn
// returns for its current contents, holding the write lock in between so
// concurrent updates are not lost. An error from fn is returned as is and
// nothing is written.
func (j *Jail) UpdateFile(p string, fn func([]byte) ([]byte, error)) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	rel, err := j.Clean(p)
	if err != nil {
		return err
	}
	// Refuse a symlink before reading through it: the write would be
	// refused anyway, and the model should learn why first.
	if err := j.checkWriteTarget(p, rel); err != nil {
		return err
	}
	old, err := j.readRel(p, rel)
	if err != nil {
		return err
	}
	data, err := fn(old)
	if err != nil {
		return err
	}
	return j.writeLocked(p, rel, data)
}

// checkWriteTarget refuses to write to rel when it is a symlink, a
// directory, something else not regular, or a hard-linked file. A missing
// rel is fine.
func (j *Jail) checkWriteTarget(p, rel string) error {
	if rel == "." {
		return &JailError{Path: p, Reason: reasonIsDir}
	}
	fi, err := j.root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return j.wrap(p, "writing", err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return &JailError{Path: p, Reason: reasonWriteLink}
	case fi.IsDir():
		return &JailError{Path: p, Reason: reasonIsDir}
	case !fi.Mode().IsRegular():
		return &JailError{Path: p, Reason: reasonNotRegular}
	case hardLinked(fi):
		return &JailError{Path: p, Reason: reasonHardLink}
	}
	return nil
}

func (j *Jail) writeLocked(p, rel string, data []byte) error {
	if err := j.checkWriteTarget(p, rel); err != nil {
		return err
	}
	dir, name := path.Split(rel)
	dir = path.Clean(dir)
	if dir != "." {
		if err := j.root.MkdirAll(dir, 0o700); err != nil {
			return j.wrap(p, "creating directories for", err)
		}
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := path.Join(dir, tempPrefix+hex.EncodeToString(rnd[:])+"-"+truncName(name))
	// O_EXCL fails on anything already there, a symlink included.
	f, err := j.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return j.wrap(p, "writing", err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = j.root.Rename(tmp, rel)
	}
	if werr != nil {
		_ = j.root.Remove(tmp)
		return j.wrap(p, "writing", werr)
	}
	return nil
}

// truncName keeps temporary names within NAME_MAX for long file names.
func truncName(name string) string {
	if len(name) > 200 {
		return name[:200]
	}
	return name
}

// Stat returns information about p, following symlinks inside the
// workspace.
func (j *Jail) Stat(p string) (fs.FileInfo, error) {
	rel, err := j.Clean(p)
	if err != nil {
		return nil, err
	}
	fi, err := j.root.Stat(rel)
	if err != nil {
		return nil, j.wrap(p, "checking", err)
	}
	return fi, nil
}

// ReadDir lists the directory p sorted by name: at most n entries when n
// is positive, and total, the number of names in the directory. The
// entries describe the names themselves (Lstat), so a symlink is listed as
// one. All the names are read to sort them, so a huge directory costs
// memory in proportion to its size.
func (j *Jail) ReadDir(p string, n int) (entries []fs.FileInfo, total int, err error) {
	rel, err := j.Clean(p)
	if err != nil {
		return nil, 0, err
	}
	d, err := j.root.Open(rel)
	if err != nil {
		return nil, 0, j.wrap(p, "listing", err)
	}
	defer d.Close()
	if fi, err := d.Stat(); err == nil && !fi.IsDir() {
		return nil, 0, fmt.Errorf("listing %q: not a directory", p)
	}
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, 0, j.wrap(p, "listing", err)
	}
	total = len(names)
	slices.Sort(names)
	if n > 0 && len(names) > n {
		names = names[:n]
	}
	entries = make([]fs.FileInfo, 0, len(names))
	for _, name := range names {
		fi, err := j.root.Lstat(path.Join(rel, name))
		if err != nil {
			// Removed since it was listed.
			continue
		}
		entries = append(entries, fi)
	}
	return entries, total, nil
}

// Remove removes the file or empty directory p; a symlink is removed
// itself, never its target.
func (j *Jail) Remove(p string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	rel, err := j.Clean(p)
	if err != nil {
		return err
	}
	if rel == "." {
		return &JailError{Path: p, Reason: "the workspace itself cannot be removed"}
	}
	if err := j.root.Remove(rel); err != nil {
		return j.wrap(p, "removing", err)
	}
	return nil
}

// wrap turns an OS error into one for the model: an escape the os.Root
// refused becomes a *JailError, anything else says what failed on which
// path without the workspace's absolute location.
func (j *Jail) wrap(p, op string, err error) error {
	if isEscape(err) {
		return &JailError{Path: p, Reason: reasonEscapes}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s %q: no such file or directory", op, p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("%s %q: permission denied", op, p)
	}
	return fmt.Errorf("%s %q: %w", op, p, err)
}

// isEscape reports the error os.Root returns for a lookup leaving the
// root. The os package does not export it, so its text is matched; a test
// pins that text.
func isEscape(err error) bool {
	for err != nil {
		if err.Error() == "path escapes from parent" {
			return true
		}
		err = errors.Unwrap(err)
	}
	return false
}
