package store

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// GatewayTokenFile is the file in the state directory that holds the
// gateway's generated shared-secret token: 48 lowercase hex characters and a
// newline, mode 0600.
const GatewayTokenFile = "gateway.token"

// gatewayTokenMu serializes GatewayToken within the process; between
// processes the file itself decides (see createGatewayToken).
var gatewayTokenMu sync.Mutex

// GatewayToken returns the gateway token kept in dir/gateway.token, creating
// the directory (mode 0700) and a new random token (24 bytes as 48 hex
// characters, the size of OpenClaw's generated token) on first use; created
// reports whether this call made it.
//
// It is a function of the state directory rather than a method of [SQLite]
// because the CLI (`switchboard gateway token`) must be able to read it while
// the server holds the store open. Concurrent first calls, in this process or
// others, agree on one token: the file is written to a temporary file,
// fsynced, and then linked into place, which fails instead of replacing a
// token someone else created first.
//
// It refuses, with an error saying what to do, a file that group or others
// may read or write (the token may have leaked), one that is not a regular
// file, and one that does not hold a well-formed token. Errors never contain
// the token.
func GatewayToken(dir string) (token string, created bool, err error) {
	gatewayTokenMu.Lock()
	defer gatewayTokenMu.Unlock()
	return gatewayToken(dir)
}

// ReadGatewayToken returns the gateway token kept in dir/gateway.token
// without creating anything: an error wrapping [fs.ErrNotExist] when there
// is none yet, and GatewayToken's refusals for a file that may have
// leaked or is malformed. The CLI reads the daemon's token with it.
func ReadGatewayToken(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("store: gateway token: no state dir given; set stateDir or SWITCHBOARD_STATE_DIR")
	}
	gatewayTokenMu.Lock()
	defer gatewayTokenMu.Unlock()
	return readGatewayToken(filepath.Join(dir, GatewayTokenFile))
}

// gatewayToken is GatewayToken without the in-process lock, so tests can race
// the file-level protocol itself.
func gatewayToken(dir string) (string, bool, error) {
	if dir == "" {
		return "", false, errors.New("store: gateway token: no state dir given; set stateDir or SWITCHBOARD_STATE_DIR")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false, fmt.Errorf("store: state dir %s: %w", dir, err)
	}
	if err := ensureDir(abs); err != nil {
		return "", false, err
	}
	path := filepath.Join(abs, GatewayTokenFile)

	token, err := readGatewayToken(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return token, false, err
	}
	token = NewSecretToken()
	err = createGatewayToken(path, token)
	if errors.Is(err, fs.ErrExist) {
		// Another caller created it between our read and our link: theirs
		// is the token.
		token, err := readGatewayToken(path)
		return token, false, err
	}
	if err != nil {
		return "", false, err
	}
	return token, true, nil
}

// maxGatewayTokenFile is more than a token and its newline will ever take;
// a longer file is not ours, and is not read whole.
const maxGatewayTokenFile = 256

// readGatewayToken reads and checks the token file at path. A missing file is
// an error wrapping fs.ErrNotExist.
func readGatewayToken(path string) (string, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err != nil {
		return "", fmt.Errorf("store: gateway token %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("store: gateway token %s is not a regular file (%s); remove it and a new token is generated (clients then need the new token)", path, fi.Mode().Type())
	}
	// Windows reports no Unix permission bits worth checking.
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return "", fmt.Errorf("store: gateway token %s is accessible to users other than its owner (mode %04o), so the token may have leaked; delete the file and a new token is generated (clients then need the new token), or, if you are sure it has not leaked, run chmod 600 %s", path, perm, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("store: gateway token %s: %w", path, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGatewayTokenFile+1))
	if err != nil {
		return "", fmt.Errorf("store: gateway token %s: %w", path, err)
	}
	// Surrounding whitespace is allowed, so a file written with echo works.
	token := strings.TrimSpace(string(b))
	if len(b) > maxGatewayTokenFile || !IsSecretTokenShaped(token) {
		return "", fmt.Errorf("store: gateway token %s does not hold a token (48 lowercase hex characters); delete it and a new token is generated (clients then need the new token), or write a valid token into it", path)
	}
	return token, nil
}

// createGatewayToken writes token to path if no file is there, durably: the
// token goes to a temporary file in the same directory, which is fsynced and
// then hard-linked to path, and the directory is fsynced. A reader therefore
// sees no file or the whole token, never a partial one, and a crash leaves
// one of the two as well. Unlike rename, link fails with fs.ErrExist if path
// exists, so the first of several concurrent creators wins and the others
// read its token.
func createGatewayToken(path, token string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+GatewayTokenFile+".tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("store: create gateway token in %s: %w; set stateDir or SWITCHBOARD_STATE_DIR to a writable directory", dir, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a link, only the temporary name goes
	_, err = f.WriteString(token + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("store: create gateway token %s: %w", path, err)
	}

	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		// A file system without hard links: rename instead, which would
		// replace a file another process created in the meantime, so look
		// first. The window left is the other process's, not this one's.
		if _, serr := os.Lstat(path); serr == nil {
			return fs.ErrExist
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("store: create gateway token %s: %w", path, err)
		}
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("store: create gateway token %s: sync directory: %w", path, err)
	}
	return nil
}

// syncDir fsyncs directory dir, so a file just linked or renamed into it
// survives a power loss. Windows cannot sync a directory and does not need
// to.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
