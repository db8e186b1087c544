package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/switchboardhq/switchboard/config"
	"github.com/switchboardhq/switchboard/gateway"
	"github.com/switchboardhq/switchboard/gateway/protocol"
	"github.com/switchboardhq/switchboard/store"
)

// applyFunc applies a configuration just written to the file: old is what
// the file held before (nil when it did not exist or was invalid), new what
// it holds now. It returns the keys (dotted paths, or top-level sections)
// that took effect at once and those that need a restart. It is called with
// the service's lock held, one write at a time, and must not block for
// long.
type applyFunc func(old, new *config.Config) (applied, restartRequired []string)

// configService backs the gateway's config.get, config.schema, config.set
// and config.patch methods with the configuration file.
//
// Secrets never leave it: the file text and the parsed configuration are
// returned with every secret replaced by config.Redacted, and a write that
// carries config.Redacted where a secret was keeps that secret, so a client
// can read, edit and write back without knowing it. Errors are scrubbed of
// the secrets of the file and of the new text. Nor can a write send a secret
// somewhere new without carrying it (checkSecretURLs), and a file with a
// secret written in it is written readable by its owner only.
type configService struct {
	path   string
	lookup config.LookupEnv
	apply  applyFunc

	// mu serializes Set and Patch: read, compare hash, write, apply.
	mu sync.Mutex
}

var _ gateway.ConfigService = (*configService)(nil)

// newConfigService serves the configuration file at path, expanding ${VAR}
// with lookup (nil means os.LookupEnv). A nil apply applies nothing and
// reports every changed top-level section as needing a restart.
func newConfigService(path string, lookup config.LookupEnv, apply applyFunc) *configService {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	if apply == nil {
		apply = func(old, new *config.Config) ([]string, []string) { return nil, changedSections(old, new) }
	}
	return &configService{path: path, lookup: lookup, apply: apply}
}

// configIssue is one problem of a configuration, as config.get lists them
// and config.set reports them in details.issues.
type configIssue struct {
	// Path is the dotted key, empty for the file as a whole.
	Path string `json:"path"`
	// Message says what is wrong, with the line and column when known.
	Message string `json:"message"`
	// Line and Column locate the problem in the text, 1-based.
	Line   int `json:"line,omitempty"`
	Column int `json:"column,omitempty"`
}

// configSnapshot is the result of config.get.
type configSnapshot struct {
	// Path is the configuration file.
	Path string `json:"path"`
	// Exists is false when the file does not exist yet.
	Exists bool `json:"exists"`
	// Raw is the file's text with secrets redacted; null when the file does
	// not exist or is invalid (a secret under a misspelled key could not be
	// told apart, so the text is withheld; warnings say so).
	Raw *string `json:"raw"`
	// Config is the parsed configuration, defaults filled in and ${VAR}
	// expanded, with secrets redacted; null when invalid.
	Config json.RawMessage `json:"config"`
	// Valid reports whether the file parses and validates.
	Valid bool `json:"valid"`
	// Issues lists every problem of an invalid file.
	Issues []configIssue `json:"issues"`
	// Warnings are things to know about a file that is valid or not.
	Warnings []configIssue `json:"warnings"`
	// Hash is the SHA-256 of the file's bytes (of no bytes when missing),
	// to send back as baseHash.
	Hash string `json:"hash"`
}

// configWriteResult is the result of config.set and config.patch.
type configWriteResult struct {
	OK   bool   `json:"ok"`
	Path string `json:"path"`
	// Hash is the hash of the file as written, the next baseHash.
	Hash string `json:"hash"`
	// Config is the new configuration, secrets redacted.
	Config json.RawMessage `json:"config"`
	// Applied lists what took effect at once.
	Applied []string `json:"applied"`
	// RestartRequired lists what takes effect at the next start.
	RestartRequired []string `json:"restartRequired"`
	// Warnings are things to know about the write, such as the file's
	// mode having been narrowed; omitted when there are none.
	Warnings []configIssue `json:"warnings,omitempty"`
}

// configSchemaResult is the result of config.schema.
type configSchemaResult struct {
	Schema  json.RawMessage `json:"schema"`
	Version string          `json:"version"`
}

// Get returns the configuration file: its text and parsed form with
// secrets redacted, whether it is valid, and its hash.
func (s *configService) Get(ctx context.Context) (any, error) {
	data, exists, err := s.read()
	if err != nil {
		return nil, err
	}
	snap := configSnapshot{
		Path:     s.path,
		Exists:   exists,
		Config:   json.RawMessage("null"),
		Issues:   []configIssue{},
		Warnings: []configIssue{},
		Hash:     hashOf(data),
	}
	secrets := config.SecretValues(data, s.lookup)
	cfg, err := config.Parse(s.path, data, s.lookup)
	if err != nil {
		snap.Issues = issuesOf(err, secrets)
		if exists {
			snap.Warnings = append(snap.Warnings, configIssue{Message: "the file's text is withheld while it is invalid, because its secrets cannot be told apart for certain; fix the issues listed, or replace the whole file with config.set"})
		}
		return snap, nil
	}
	snap.Valid = true
	if snap.Config, err = cfg.RedactedJSON(); err != nil {
		return nil, err
	}
	if exists {
		raw, err := config.RedactSource(data, s.lookup)
		if err != nil {
			snap.Warnings = append(snap.Warnings, configIssue{Message: config.Scrub("the file's text is withheld: "+err.Error(), secrets)})
		} else {
			text := string(raw)
			snap.Raw = &text
		}
	}
	return snap, nil
}

// Schema returns the configuration's JSON Schema and Switchboard's version.
func (s *configService) Schema(ctx context.Context) (any, error) {
	b, err := config.Schema()
	if err != nil {
		return nil, err
	}
	return configSchemaResult{Schema: b, Version: version}, nil
}

// Set replaces the configuration file with raw, a whole YAML (or JSON)
// document, written as sent, after restoring redacted secrets and
// validating it.
func (s *configService) Set(ctx context.Context, raw, baseHash string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.current(baseHash)
	if err != nil {
		return nil, err
	}
	return s.write(ctx, cur, []byte(raw), []byte(raw))
}

// Patch applies patch, an RFC 7396 JSON merge patch, to the configuration
// file and then writes it as Set does. The file is written afresh from the
// merged document: comments are lost, and anchors and aliases become copies
// (see config.MergePatch).
func (s *configService) Patch(ctx context.Context, patch json.RawMessage, baseHash string) (any, error) {
	trimmed := bytes.TrimSpace(patch)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, protocol.InvalidRequest("invalid config.patch params: patch must be a JSON object (an RFC 7396 merge patch; null removes a key)", nil)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.current(baseHash)
	if err != nil {
		return nil, err
	}
	next, err := config.MergePatch(s.path, cur.data, trimmed)
	if err != nil {
		secrets := config.SecretValues(cur.data, s.lookup)
		var problems config.Errors
		if errors.As(err, &problems) {
			issues := issuesOf(err, secrets)
			return nil, protocol.InvalidRequest("cannot patch the configuration file, it is not valid YAML: "+joinIssues(issues)+"; replace it with config.set", map[string]any{"issues": issues})
		}
		return nil, protocol.InvalidRequest(config.Scrub(err.Error(), secrets), nil)
	}
	return s.write(ctx, cur, next, trimmed)
}

// currentFile is the configuration file as read before a write.
type currentFile struct {
	data   []byte
	exists bool
}

// current reads the file and checks it still has baseHash.
func (s *configService) current(baseHash string) (currentFile, error) {
	data, exists, err := s.read()
	if err != nil {
		return currentFile{}, err
	}
	if baseHash != "" && !strings.EqualFold(strings.TrimSpace(baseHash), hashOf(data)) {
		return currentFile{}, protocol.InvalidRequest("config changed since it was read; reload and retry", map[string]any{"code": "CONFIG_HASH_MISMATCH"})
	}
	return currentFile{data: data, exists: exists}, nil
}

// write validates next, writes it in place of cur and applies it. request
// is what the client sent (next itself, or the patch that made it), which
// must carry any secret the write sends somewhere new (checkSecretURLs).
func (s *configService) write(ctx context.Context, cur currentFile, next, request []byte) (any, error) {
	secrets := append(config.SecretValues(cur.data, s.lookup), config.SecretValues(next, s.lookup)...)
	next, err := config.RestoreSecrets(s.path, next, cur.data)
	if err != nil {
		return nil, invalidConfig(err, secrets)
	}
	secrets = append(secrets, config.SecretValues(next, s.lookup)...)
	cfg, err := config.Parse(s.path, next, s.lookup)
	if err != nil {
		return nil, invalidConfig(err, secrets)
	}
	var old *config.Config
	if cur.exists {
		old, _ = config.Parse(s.path, cur.data, s.lookup)
	}
	if err := checkSecretURLs(old, cfg, request); err != nil {
		return nil, err
	}
	if err := checkStoreUnchanged(old, cfg); err != nil {
		return nil, err
	}
	redacted, err := cfg.RedactedJSON()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("config: not written: %w", err)
	}
	was, mode, err := writeFileAtomic(s.path, next, holdsInlineSecret(next))
	if err != nil {
		return nil, errors.New(config.Scrub(err.Error(), secrets))
	}
	var warnings []configIssue
	if was != 0 && mode != was {
		warnings = append(warnings, configIssue{Message: fmt.Sprintf(
			"the file holds a secret written in it, so it is now readable by its owner only (mode %04o, was %04o); "+
				"write secrets as ${VAR} references to keep them out of the file", mode, was)})
	}
	applied, restart := s.apply(old, cfg)
	return configWriteResult{
		OK:              true,
		Path:            s.path,
		Hash:            hashOf(next),
		Config:          redacted,
		Applied:         nonNil(applied),
		RestartRequired: nonNil(restart),
		Warnings:        warnings,
	}, nil
}

// read returns the file's bytes; a missing file is empty and not an error.
func (s *configService) read() ([]byte, bool, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("config: read %s: %w", s.path, errors.Unwrap(err))
	}
	return data, true, nil
}

// invalidConfig is the error of a write that did not validate: INVALID_REQUEST
// "invalid config: …" with every problem in details.issues.
func invalidConfig(err error, secrets []string) error {
	issues := issuesOf(err, secrets)
	return protocol.InvalidRequest("invalid config: "+joinIssues(issues), map[string]any{"issues": issues})
}

// issuesOf lists the problems of err (config.Errors, or any error), with
// secrets scrubbed from the messages.
func issuesOf(err error, secrets []string) []configIssue {
	var problems config.Errors
	if !errors.As(err, &problems) {
		return []configIssue{{Message: config.Scrub(err.Error(), secrets)}}
	}
	issues := make([]configIssue, 0, len(problems))
	for _, p := range problems {
		msg := p.Message
		if p.Line > 0 {
			msg = fmt.Sprintf("line %d, column %d: %s", p.Line, p.Column, msg)
		}
		issues = append(issues, configIssue{
			Path:    config.Scrub(p.Path, secrets),
			Message: config.Scrub(msg, secrets),
			Line:    p.Line,
			Column:  p.Column,
		})
	}
	return issues
}

// joinIssues writes issues on one line for an error message.
func joinIssues(issues []configIssue) string {
	parts := make([]string, len(issues))
	for i, is := range issues {
		if is.Path != "" {
			parts[i] = is.Path + ": " + is.Message
		} else {
			parts[i] = is.Message
		}
	}
	return strings.Join(parts, "; ")
}

// hashOf is the baseHash of file contents: lowercase hex SHA-256.
func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// changedSections lists the top-level keys whose settings differ between
// old and new; with no old, all of them.
func changedSections(old, new *config.Config) []string {
	var out []string
	nv := reflect.ValueOf(new).Elem()
	t := nv.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		if old == nil || !reflect.DeepEqual(reflect.ValueOf(old).Elem().Field(i).Interface(), nv.Field(i).Interface()) {
			out = append(out, name)
		}
	}
	return out
}

// writeFileAtomic replaces the file at path with data so that a reader, or
// a crash, sees the old contents or the new, never part of them: data goes
// to a temporary file in the same directory, which is fsynced and renamed
// over the file, and the directory is fsynced. The file keeps its
// permissions, except that a private one loses the group's and others'
// (privateMode); a new one gets 0600, as it may hold secrets. A symbolic
// link is followed, so the file it points to is replaced, not the link. It
// returns the mode the file had (0 when new) and the one it has now.
func writeFileAtomic(path string, data []byte, private bool) (was, mode fs.FileMode, err error) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	mode = 0o600
	if fi, err := os.Stat(target); err == nil {
		was = fi.Mode().Perm()
		mode = was
	}
	if private {
		mode = privateMode(mode)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return was, mode, fmt.Errorf("config: write %s: %w", path, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return was, mode, fmt.Errorf("config: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	// The mode is set before the secret is written, so that the
	// temporary file is never readable by others with it inside.
	err = f.Chmod(mode)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return was, mode, fmt.Errorf("config: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, target); err != nil {
		return was, mode, fmt.Errorf("config: write %s: %w", path, err)
	}
	// The file is replaced now; syncing the directory only makes the
	// rename survive a power loss, and failing here would report a write
	// that took place as one that did not.
	if runtime.GOOS != "windows" {
		if d, err := os.Open(dir); err == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return was, mode, nil
}

// checkStoreUnchanged refuses a write over the gateway that changes the
// store section: it decides where every message, session, device and
// token is kept, so a client pointing it at a database of its own would
// have all of it from the next start on. The operator edits the file on
// the gateway's machine instead. old nil (no valid file before) compares
// with the defaults.
func checkStoreUnchanged(old, new *config.Config) error {
	var before store.Config
	if old != nil {
		before = old.Store
	}
	if before.EffectiveDriver() == new.Store.EffectiveDriver() && before.URL == new.Store.URL {
		return nil
	}
	return protocol.InvalidRequest("the store section cannot be changed over the gateway: it decides where all state is kept; "+
		"edit the configuration file on the gateway's machine and restart", map[string]any{"code": "CONFIG_STORE_LOCKED", "path": "store"})
}
