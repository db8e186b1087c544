package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// The roles a device can be paired with, as the gateway protocol names them.
const (
	// RoleOperator is a client that drives the gateway: Control UI, CLI, apps.
	RoleOperator = "operator"
	// RoleNode is a client that offers capabilities (camera, canvas, ...) to
	// the gateway.
	RoleNode = "node"
)

// Device is a paired client device: an Ed25519 identity the operator, or
// loopback auto-approval, let in with a role and scopes.
type Device struct {
	// ID is the lowercase sha256 hex of the raw 32-byte public key.
	ID string
	// PublicKey is the key as the client sent it (base64url raw key or PEM).
	PublicKey string
	// Role is RoleOperator or RoleNode.
	Role string
	// Scopes is what the device was granted: the ceiling of every token
	// issued to it. The store trims, de-duplicates and sorts them and
	// returns an empty, non-nil slice for none. It compares scopes as plain
	// strings; implied scopes (admin implies read and write) are the
	// caller's to expand before storing.
	Scopes []string
	// ClientID is connect's client.id ("openclaw-macos", "cli", ...).
	ClientID string
	// ClientMode is connect's client.mode ("ui", "cli", "node", ...).
	ClientMode string
	// Platform is connect's client.platform.
	Platform string
	// DeviceFamily is connect's client.deviceFamily.
	DeviceFamily string
	// DisplayName is what operators see in device lists.
	DisplayName string
	// PairedAt is when the device was (last) approved, in unix milliseconds;
	// zero means the store's clock at the time of the write.
	PairedAt int64
	// LastSeenAt is the device's last connect, in unix milliseconds; zero
	// means never since pairing.
	LastSeenAt int64
	// Remote reports that the device paired from a non-loopback address.
	Remote bool
}

// PairingRequest is a device waiting for an operator to approve or reject it.
type PairingRequest struct {
	// RequestID names the request in device.pair.approve and
	// device.pair.reject. It is random and URL-safe; the store generates
	// one (a UUID) when it is empty.
	RequestID string
	// Device is what the device asked for: its identity, Role and the
	// Scopes it requested. PairedAt and LastSeenAt are not used.
	Device Device
	// IP is the address the request came from, for the operator to judge.
	IP string
	// CreatedAt is when the request was made, in unix milliseconds; zero
	// means the store's clock. Pruning expires requests by it.
	CreatedAt int64
}

// IssuedToken is what a device token grants. Only the token's sha256 is
// stored, so the token itself is never part of it.
type IssuedToken struct {
	// DeviceID is the device the token was issued to. A token proves nothing
	// about who presents it: the gateway must check that DeviceID is the
	// device whose signature it verified on connect.
	DeviceID string
	// Role is the role the token grants; it is always the device's current
	// role.
	Role string
	// Scopes are the token's scopes as issued, narrowed to the device's
	// current scopes; never nil.
	Scopes []string
	// IssuedAt is when the token was issued, in unix milliseconds.
	IssuedAt int64
}

// Devices is the durable state of device identity: paired devices, pending
// pairing requests and the device tokens handed out in hello-ok.
//
// The store enforces what holds for every caller: a token never grants more
// than its device was paired with (IssueDeviceToken refuses it, and
// CheckDeviceToken clamps a token to the device's current role and scopes),
// and unpairing a device revokes its tokens. Whether a caller may approve,
// rotate or remove, and that what it grants is within its own scopes, is the
// gateway's to decide before it calls (see reliability-security.md, lesson
// 3): ApprovePairing and RotateDeviceToken grant exactly what they are told
// or what the device already holds.
//
// Methods taking a time in unix milliseconds use the store's clock when it is
// zero. Lookups of an id that does not exist return false; operations on one
// return an error wrapping [ErrUnknownDevice] or [ErrUnknownPairingRequest].
// Plain tokens appear only in IssueDeviceToken's and RotateDeviceToken's
// results and CheckDeviceToken's argument, never in an error or a row.
type Devices interface {
	// GetDevice returns the paired device with id, and false if there is
	// none.
	GetDevice(ctx context.Context, id string) (Device, bool, error)
	// ListDevices returns every paired device, most recently paired first.
	ListDevices(ctx context.Context) ([]Device, error)
	// PutDevice pairs d, or replaces every field of an already paired
	// device with d's. Its tokens stay; a narrower role or scopes narrow
	// them when they are checked.
	PutDevice(ctx context.Context, d Device) error
	// TouchDevice records that the device connected at at; LastSeenAt never
	// moves backwards.
	TouchDevice(ctx context.Context, id string, at int64) error
	// RemoveDevice unpairs the device, revokes its tokens and deletes its
	// pending pairing request, in one transaction.
	RemoveDevice(ctx context.Context, id string) error

	// CreatePairingRequest records r and returns it with true. If the device
	// already has a pending request, that request is returned unchanged with
	// false and r is discarded, so a reconnecting device keeps one request
	// and the id the operator was shown. It fails with an error wrapping
	// [ErrTooManyPairingRequests] when MaxPendingPairingRequests are
	// pending.
	CreatePairingRequest(ctx context.Context, r PairingRequest) (PairingRequest, bool, error)
	// ListPairingRequests returns the pending requests, newest first.
	ListPairingRequests(ctx context.Context) ([]PairingRequest, error)
	// ApprovePairing pairs the request's device with exactly scopes, which
	// the caller has already clamped to what it may grant, records at as
	// PairedAt, and deletes the request, in one transaction. Approving a
	// device that is already paired (a repair) replaces its role, scopes and
	// metadata and keeps its tokens, clamped as with PutDevice.
	ApprovePairing(ctx context.Context, requestID string, scopes []string, at int64) (Device, error)
	// RejectPairing deletes the pending request.
	RejectPairing(ctx context.Context, requestID string) error
	// PrunePairingRequests deletes the requests created before the cutoff
	// (unix ms) and returns how many went: the pairing TTL.
	PrunePairingRequests(ctx context.Context, before int64) (int64, error)

	// IssueDeviceToken creates a token for a paired device (48 hex
	// characters from 24 random bytes), stores only its sha256 and returns
	// the token; it cannot be read back. role must be the device's role and
	// scopes a subset of its scopes, else the error wraps [ErrExceedsGrant].
	// A device keeps at most MaxDeviceTokens live tokens; issuing another
	// revokes its oldest.
	IssueDeviceToken(ctx context.Context, deviceID, role string, scopes []string, at int64) (string, error)
	// CheckDeviceToken returns what token grants, and false if it is
	// unknown, revoked, malformed or its device's role has changed since it
	// was issued. The lookup is by the token's hash, so no secret is ever
	// compared byte by byte and the check needs no constant-time compare.
	CheckDeviceToken(ctx context.Context, token string) (IssuedToken, bool, error)
	// RotateDeviceToken revokes all of the device's tokens and issues a new
	// one with the device's role and scopes, in one transaction. A caller
	// rotating another device's token must first check that those scopes
	// are within its own.
	RotateDeviceToken(ctx context.Context, deviceID string, at int64) (string, error)
	// RevokeDeviceTokens revokes all of the device's tokens and returns how
	// many there were.
	RevokeDeviceTokens(ctx context.Context, deviceID string) (int64, error)
}

// ErrUnknownDevice is wrapped by the errors Devices methods return when they
// are asked to change a device that is not paired.
var ErrUnknownDevice = errors.New("store: no such paired device")

// ErrUnknownPairingRequest is wrapped by the errors ApprovePairing and
// RejectPairing return when no such request is pending: it never existed,
// was already approved or rejected, or expired.
var ErrUnknownPairingRequest = errors.New("store: no such pairing request")

// ErrExceedsGrant is wrapped by the error IssueDeviceToken returns when the
// token would grant a role or scope the device was not paired with.
var ErrExceedsGrant = errors.New("store: token would exceed what the device was granted")

// ErrTooManyPairingRequests is wrapped by the error CreatePairingRequest
// returns when MaxPendingPairingRequests are already pending.
var ErrTooManyPairingRequests = errors.New("store: too many pending pairing requests")

// MaxPendingPairingRequests bounds the pending pairing requests. Any client
// past shared-secret auth can make one with a fresh key pair, so without a
// bound a script could grow the table, and the operator's list, forever.
const MaxPendingPairingRequests = 256

// MaxDeviceTokens bounds the live tokens of one device. Each hello-ok issues a
// new token, because only hashes are kept and an old one cannot be handed out
// again; keeping a few older ones lets a client that lost the newest (it
// crashed before saving it) still connect, and the bound stops a device that
// reconnects all day from growing the table.
const MaxDeviceTokens = 4

var _ Devices = (*SQLite)(nil)

// deviceTokenBytes is the entropy of a device token: 192 bits, the same as
// the gateway token and OpenClaw's generated shared secret.
const deviceTokenBytes = 24

// storedDevice is a Device as JSON in pairing_requests.device. The JSON names
// are fixed here, so renaming a Go field does not orphan stored requests.
type storedDevice struct {
	ID           string   `json:"id"`
	PublicKey    string   `json:"publicKey"`
	Role         string   `json:"role"`
	Scopes       []string `json:"scopes"`
	ClientID     string   `json:"clientId,omitempty"`
	ClientMode   string   `json:"clientMode,omitempty"`
	Platform     string   `json:"platform,omitempty"`
	DeviceFamily string   `json:"deviceFamily,omitempty"`
	DisplayName  string   `json:"displayName,omitempty"`
	Remote       bool     `json:"remote,omitempty"`
}

// IsSecretTokenShaped reports whether token has the shape NewSecretToken
// gives (48 lowercase hex characters): one that does not cannot be ours.
func IsSecretTokenShaped(token string) bool { return isLowerHex(token, 2*deviceTokenBytes) }

// MarshalPairingDevice is the JSON a pairing request keeps of the device
// that asked (its identity, role, scopes and client metadata; not when it
// was paired or seen), under names fixed here.
func MarshalPairingDevice(d Device) ([]byte, error) { return json.Marshal(toStored(d)) }

// UnmarshalPairingDevice reads what MarshalPairingDevice wrote, scopes
// normalized.
func UnmarshalPairingDevice(b []byte) (Device, error) {
	var sd storedDevice
	if err := json.Unmarshal(b, &sd); err != nil {
		return Device{}, err
	}
	return sd.device(), nil
}

func toStored(d Device) storedDevice {
	return storedDevice{
		ID: d.ID, PublicKey: d.PublicKey, Role: d.Role, Scopes: d.Scopes,
		ClientID: d.ClientID, ClientMode: d.ClientMode, Platform: d.Platform,
		DeviceFamily: d.DeviceFamily, DisplayName: d.DisplayName, Remote: d.Remote,
	}
}

func (sd storedDevice) device() Device {
	return Device{
		ID: sd.ID, PublicKey: sd.PublicKey, Role: sd.Role, Scopes: NormalizeScopes(sd.Scopes),
		ClientID: sd.ClientID, ClientMode: sd.ClientMode, Platform: sd.Platform,
		DeviceFamily: sd.DeviceFamily, DisplayName: sd.DisplayName, Remote: sd.Remote,
	}
}

// NormalizeScopes trims, drops empty, de-duplicates and sorts scopes, so
// equal grants are stored, compared and shown alike. It never returns nil:
// an empty grant is JSON [] on the wire, not null. Like the other exported
// helpers of this file, it is shared by the store implementations so that
// they store and check grants alike.
func NormalizeScopes(scopes []string) []string {
	out := make([]string, 0, len(scopes))
	for _, s := range scopes {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ScopesJSON is normalized scopes as a JSON array, as a scopes column
// holds them.
func ScopesJSON(scopes []string) string {
	b, _ := json.Marshal(NormalizeScopes(scopes)) // []string always marshals
	return string(b)
}

// ParseScopes decodes a scopes column, normalized.
func ParseScopes(s string) ([]string, error) {
	var out []string
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		return nil, fmt.Errorf("stored scopes are not a JSON array of strings: %w", err)
	}
	return NormalizeScopes(out), nil
}

// isLowerHex reports whether s is n lowercase hex digits.
func isLowerHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range len(s) {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// ValidateDevice rejects a device the store would not be able to tell apart
// or that the schema would reject, with a message naming the field; op
// names the operation in it.
func ValidateDevice(op string, d Device) error {
	switch {
	case !isLowerHex(d.ID, 2*sha256.Size):
		return fmt.Errorf("store: %s: device id %q is not the 64-character lowercase sha256 hex of the public key", op, d.ID)
	case strings.TrimSpace(d.PublicKey) == "":
		return fmt.Errorf("store: %s: device %s: public key is required", op, d.ID)
	case d.Role != RoleOperator && d.Role != RoleNode:
		return fmt.Errorf("store: %s: device %s: role %q is not %q or %q", op, d.ID, d.Role, RoleOperator, RoleNode)
	}
	return nil
}

// ValidRequestID reports whether id is a non-empty URL-safe request id of
// sensible length (1 to 128 of A-Z a-z 0-9 - _).
func ValidRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// NewRequestID returns a random (version 4) UUID, the shape OpenClaw's
// request ids have, so clients and operators see what they expect.
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it crashes the program instead.
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// NewSecretToken returns 24 random bytes as 48 lowercase hex characters: a
// device token or the gateway token.
func NewSecretToken() string {
	var b [deviceTokenBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails; it crashes the program instead.
	return hex.EncodeToString(b[:])
}

// tokenHash is how a device token is stored and looked up.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// orNow returns at, or the store's clock when at is zero.
func (s *SQLite) orNow(at int64) int64 {
	if at == 0 {
		return s.nowMilli()
	}
	return at
}

// deviceColumns are the columns scanDevice reads, in its order.
const deviceColumns = `id, public_key, role, scopes, client_id, client_mode, platform,
	device_family, display_name, remote, paired_at, last_seen_at`

// rowScanner is *sql.Row or *sql.Rows.
type rowScanner interface{ Scan(dest ...any) error }

func scanDevice(r rowScanner) (Device, error) {
	var (
		d      Device
		scopes string
	)
	err := r.Scan(&d.ID, &d.PublicKey, &d.Role, &scopes, &d.ClientID, &d.ClientMode, &d.Platform,
		&d.DeviceFamily, &d.DisplayName, &d.Remote, &d.PairedAt, &d.LastSeenAt)
	if err != nil {
		return Device{}, err
	}
	if d.Scopes, err = ParseScopes(scopes); err != nil {
		return Device{}, fmt.Errorf("device %s: %w", d.ID, err)
	}
	return d, nil
}

// GetDevice returns the paired device with id, and false if there is none.
func (s *SQLite) GetDevice(ctx context.Context, id string) (Device, bool, error) {
	d, err := scanDevice(s.reader.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM devices WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Device{}, false, nil
	}
	if err != nil {
		return Device{}, false, fmt.Errorf("store: get device %s: %w", id, err)
	}
	return d, true, nil
}

// ListDevices returns every paired device, most recently paired first.
func (s *SQLite) ListDevices(ctx context.Context) ([]Device, error) {
	rows, err := s.reader.QueryContext(ctx, `SELECT `+deviceColumns+` FROM devices ORDER BY paired_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("store: list devices: %w", err)
	}
	defer rows.Close()
	var out []Device
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list devices: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list devices: %w", err)
	}
	return out, nil
}

// sqlPutDevice inserts or replaces a device row in place. It is an upsert, not
// INSERT OR REPLACE: REPLACE deletes the old row first, and the delete would
// cascade to the device's tokens.
const sqlPutDevice = `INSERT INTO devices (` + deviceColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (id) DO UPDATE SET
		public_key = excluded.public_key, role = excluded.role, scopes = excluded.scopes,
		client_id = excluded.client_id, client_mode = excluded.client_mode,
		platform = excluded.platform, device_family = excluded.device_family,
		display_name = excluded.display_name, remote = excluded.remote,
		paired_at = excluded.paired_at, last_seen_at = excluded.last_seen_at`

// execer is *sql.DB or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

func putDevice(ctx context.Context, db execer, d Device) error {
	_, err := db.ExecContext(ctx, sqlPutDevice,
		d.ID, d.PublicKey, d.Role, ScopesJSON(d.Scopes), d.ClientID, d.ClientMode, d.Platform,
		d.DeviceFamily, d.DisplayName, d.Remote, d.PairedAt, d.LastSeenAt)
	return err
}

// PutDevice pairs d, or replaces every field of the paired device d.ID; a
// zero PairedAt is set to the store's clock.
func (s *SQLite) PutDevice(ctx context.Context, d Device) error {
	if err := ValidateDevice("put device", d); err != nil {
		return err
	}
	d.PairedAt = s.orNow(d.PairedAt)
	if err := putDevice(ctx, s.writer, d); err != nil {
		return fmt.Errorf("store: put device %s: %w", d.ID, err)
	}
	return nil
}

// TouchDevice sets the device's LastSeenAt to at unless it is already later.
func (s *SQLite) TouchDevice(ctx context.Context, id string, at int64) error {
	res, err := s.writer.ExecContext(ctx,
		`UPDATE devices SET last_seen_at = max(last_seen_at, ?) WHERE id = ?`, s.orNow(at), id)
	if err != nil {
		return fmt.Errorf("store: touch device %s: %w", id, err)
	}
	return affectedOne(res, "touch device", id, ErrUnknownDevice)
}

// affectedOne turns an UPDATE or DELETE that matched no row into an error
// wrapping unknown.
func affectedOne(res sql.Result, op, id string, unknown error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: %s %s: %w", op, id, err)
	}
	if n == 0 {
		// Quoted: the id may come straight from a client.
		return fmt.Errorf("%w: %s %q", unknown, op, id)
	}
	return nil
}

// withTx runs fn in a write transaction and commits it, or rolls it back if
// fn or the commit fails.
func (s *SQLite) withTx(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	tx, err := s.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: %s: begin: %w", op, err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: %s: commit: %w", op, err)
	}
	return nil
}

// RemoveDevice unpairs the device; the foreign key's cascade deletes its
// tokens, and its pending request is deleted in the same transaction.
func (s *SQLite) RemoveDevice(ctx context.Context, id string) error {
	return s.withTx(ctx, "remove device "+id, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE id = ?`, id)
		if err != nil {
			return fmt.Errorf("store: remove device %s: %w", id, err)
		}
		if err := affectedOne(res, "remove device", id, ErrUnknownDevice); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pairing_requests WHERE device_id = ?`, id); err != nil {
			return fmt.Errorf("store: remove device %s: pairing request: %w", id, err)
		}
		return nil
	})
}

// pairingColumns are the columns scanPairingRequest reads, in its order.
const pairingColumns = `request_id, device, ip, created_at`

func scanPairingRequest(r rowScanner) (PairingRequest, error) {
	var (
		pr   PairingRequest
		data string
	)
	if err := r.Scan(&pr.RequestID, &data, &pr.IP, &pr.CreatedAt); err != nil {
		return PairingRequest{}, err
	}
	var sd storedDevice
	if err := json.Unmarshal([]byte(data), &sd); err != nil {
		return PairingRequest{}, fmt.Errorf("pairing request %s: stored device is not valid JSON: %w", pr.RequestID, err)
	}
	pr.Device = sd.device()
	return pr, nil
}

// CreatePairingRequest records r, generating its RequestID when empty and
// setting a zero CreatedAt to the store's clock, unless the device already
// has a pending request, which is returned instead with false.
func (s *SQLite) CreatePairingRequest(ctx context.Context, r PairingRequest) (PairingRequest, bool, error) {
	if err := ValidateDevice("create pairing request", r.Device); err != nil {
		return PairingRequest{}, false, err
	}
	if r.RequestID == "" {
		r.RequestID = NewRequestID()
	} else if !ValidRequestID(r.RequestID) {
		return PairingRequest{}, false, fmt.Errorf("store: create pairing request: request id %q is not 1 to 128 URL-safe characters (A-Z a-z 0-9 - _)", r.RequestID)
	}
	r.CreatedAt = s.orNow(r.CreatedAt)
	r.Device.Scopes = NormalizeScopes(r.Device.Scopes)
	r.Device.PairedAt, r.Device.LastSeenAt = 0, 0
	data, err := json.Marshal(toStored(r.Device))
	if err != nil {
		return PairingRequest{}, false, fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
	}

	var (
		out     PairingRequest
		created bool
	)
	err = s.withTx(ctx, "create pairing request", func(tx *sql.Tx) error {
		existing, err := scanPairingRequest(tx.QueryRowContext(ctx,
			`SELECT `+pairingColumns+` FROM pairing_requests WHERE device_id = ?`, r.Device.ID))
		if err == nil {
			out = existing
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
		}
		var pending int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pairing_requests`).Scan(&pending); err != nil {
			return fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
		}
		if pending >= MaxPendingPairingRequests {
			return fmt.Errorf("%w: %d are pending; approve or reject them, or wait for them to expire", ErrTooManyPairingRequests, pending)
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO pairing_requests (request_id, device_id, device, ip, created_at) VALUES (?, ?, ?, ?, ?)`,
			r.RequestID, r.Device.ID, string(data), r.IP, r.CreatedAt); err != nil {
			return fmt.Errorf("store: create pairing request for %s: %w", r.Device.ID, err)
		}
		out, created = r, true
		return nil
	})
	if err != nil {
		return PairingRequest{}, false, err
	}
	return out, created, nil
}

// ListPairingRequests returns the pending requests, newest first.
func (s *SQLite) ListPairingRequests(ctx context.Context) ([]PairingRequest, error) {
	rows, err := s.reader.QueryContext(ctx,
		`SELECT `+pairingColumns+` FROM pairing_requests ORDER BY created_at DESC, request_id`)
	if err != nil {
		return nil, fmt.Errorf("store: list pairing requests: %w", err)
	}
	defer rows.Close()
	var out []PairingRequest
	for rows.Next() {
		pr, err := scanPairingRequest(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list pairing requests: %w", err)
		}
		out = append(out, pr)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list pairing requests: %w", err)
	}
	return out, nil
}

// ApprovePairing pairs the request's device with scopes at at and deletes the
// request. The device's LastSeenAt is the later of its previous one and the
// request's creation, when it was last seen asking.
func (s *SQLite) ApprovePairing(ctx context.Context, requestID string, scopes []string, at int64) (Device, error) {
	at = s.orNow(at)
	var d Device
	err := s.withTx(ctx, "approve pairing "+requestID, func(tx *sql.Tx) error {
		pr, err := scanPairingRequest(tx.QueryRowContext(ctx,
			`SELECT `+pairingColumns+` FROM pairing_requests WHERE request_id = ?`, requestID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: approve %q", ErrUnknownPairingRequest, requestID)
		}
		if err != nil {
			return fmt.Errorf("store: approve pairing %s: %w", requestID, err)
		}
		d = pr.Device
		d.Scopes = NormalizeScopes(scopes)
		d.PairedAt = at
		d.LastSeenAt = pr.CreatedAt
		var seen int64
		err = tx.QueryRowContext(ctx, `SELECT last_seen_at FROM devices WHERE id = ?`, d.ID).Scan(&seen)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("store: approve pairing %s: %w", requestID, err)
		}
		d.LastSeenAt = max(d.LastSeenAt, seen)
		if err := ValidateDevice("approve pairing "+requestID, d); err != nil {
			return err
		}
		if err := putDevice(ctx, tx, d); err != nil {
			return fmt.Errorf("store: approve pairing %s: %w", requestID, err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM pairing_requests WHERE request_id = ?`, requestID); err != nil {
			return fmt.Errorf("store: approve pairing %s: %w", requestID, err)
		}
		return nil
	})
	if err != nil {
		return Device{}, err
	}
	return d, nil
}

// RejectPairing deletes the pending request.
func (s *SQLite) RejectPairing(ctx context.Context, requestID string) error {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM pairing_requests WHERE request_id = ?`, requestID)
	if err != nil {
		return fmt.Errorf("store: reject pairing %s: %w", requestID, err)
	}
	return affectedOne(res, "reject", requestID, ErrUnknownPairingRequest)
}

// PrunePairingRequests deletes the requests created before the cutoff.
func (s *SQLite) PrunePairingRequests(ctx context.Context, before int64) (int64, error) {
	res, err := s.writer.ExecContext(ctx, `DELETE FROM pairing_requests WHERE created_at < ?`, before)
	if err != nil {
		return 0, fmt.Errorf("store: prune pairing requests: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: prune pairing requests: %w", err)
	}
	return n, nil
}

// pairedGrant reads the role and scopes device id was paired with, inside tx.
func pairedGrant(ctx context.Context, tx *sql.Tx, op, id string) (role string, scopes []string, err error) {
	var raw string
	err = tx.QueryRowContext(ctx, `SELECT role, scopes FROM devices WHERE id = ?`, id).Scan(&role, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, fmt.Errorf("%w: %s %q", ErrUnknownDevice, op, id)
	}
	if err != nil {
		return "", nil, fmt.Errorf("store: %s %s: %w", op, id, err)
	}
	if scopes, err = ParseScopes(raw); err != nil {
		return "", nil, fmt.Errorf("store: %s %s: %w", op, id, err)
	}
	return role, scopes, nil
}

// sqlCapTokens deletes all but the newest MaxDeviceTokens tokens of device
// ?1; rowid breaks ties between tokens issued in the same millisecond.
const sqlCapTokens = `DELETE FROM device_tokens WHERE device_id = ?1 AND token_hash NOT IN (
	SELECT token_hash FROM device_tokens WHERE device_id = ?1
	ORDER BY issued_at DESC, rowid DESC LIMIT ?2)`

// insertToken stores a new token's hash for deviceID, keeps the device within
// MaxDeviceTokens, and returns the token.
func insertToken(ctx context.Context, tx *sql.Tx, op, deviceID, role string, scopes []string, at int64) (string, error) {
	token := NewSecretToken()
	if _, err := tx.ExecContext(ctx,
		`INSERT INTO device_tokens (token_hash, device_id, role, scopes, issued_at) VALUES (?, ?, ?, ?, ?)`,
		TokenHash(token), deviceID, role, ScopesJSON(scopes), at); err != nil {
		return "", fmt.Errorf("store: %s %s: %w", op, deviceID, err)
	}
	if _, err := tx.ExecContext(ctx, sqlCapTokens, deviceID, MaxDeviceTokens); err != nil {
		return "", fmt.Errorf("store: %s %s: %w", op, deviceID, err)
	}
	return token, nil
}

// IssueDeviceToken creates a token granting role and scopes to the paired
// device and returns it; only its hash is stored.
func (s *SQLite) IssueDeviceToken(ctx context.Context, deviceID, role string, scopes []string, at int64) (string, error) {
	at = s.orNow(at)
	scopes = NormalizeScopes(scopes)
	var token string
	err := s.withTx(ctx, "issue device token", func(tx *sql.Tx) error {
		pairedRole, paired, err := pairedGrant(ctx, tx, "issue device token", deviceID)
		if err != nil {
			return err
		}
		if role != pairedRole {
			return fmt.Errorf("%w: device %s was paired as %s, not %s", ErrExceedsGrant, deviceID, pairedRole, role)
		}
		for _, sc := range scopes {
			if _, ok := slices.BinarySearch(paired, sc); !ok {
				return fmt.Errorf("%w: device %s was not granted scope %s", ErrExceedsGrant, deviceID, sc)
			}
		}
		token, err = insertToken(ctx, tx, "issue device token", deviceID, role, scopes, at)
		return err
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// CheckDeviceToken returns what token grants: its scopes as issued,
// intersected with the device's current scopes, provided the device's role
// is still the one the token was issued for.
func (s *SQLite) CheckDeviceToken(ctx context.Context, token string) (IssuedToken, bool, error) {
	// A malformed token cannot be one we issued; no need to ask the database.
	if !IsSecretTokenShaped(token) {
		return IssuedToken{}, false, nil
	}
	var (
		it                   IssuedToken
		tokenScopes, devRole string
		devScopes            string
	)
	err := s.reader.QueryRowContext(ctx, `
		SELECT t.device_id, t.role, t.scopes, t.issued_at, d.role, d.scopes
		FROM device_tokens AS t JOIN devices AS d ON d.id = t.device_id
		WHERE t.token_hash = ?`, TokenHash(token)).
		Scan(&it.DeviceID, &it.Role, &tokenScopes, &it.IssuedAt, &devRole, &devScopes)
	if errors.Is(err, sql.ErrNoRows) {
		return IssuedToken{}, false, nil
	}
	// The error names neither the token nor its hash: both would let
	// whoever reads the log look it up or use it.
	if err != nil {
		return IssuedToken{}, false, fmt.Errorf("store: check device token: %w", err)
	}
	if it.Role != devRole {
		return IssuedToken{}, false, nil
	}
	granted, err := ParseScopes(tokenScopes)
	if err != nil {
		return IssuedToken{}, false, fmt.Errorf("store: check device token of %s: %w", it.DeviceID, err)
	}
	paired, err := ParseScopes(devScopes)
	if err != nil {
		return IssuedToken{}, false, fmt.Errorf("store: check device token of %s: %w", it.DeviceID, err)
	}
	it.Scopes = slices.DeleteFunc(granted, func(sc string) bool {
		_, ok := slices.BinarySearch(paired, sc)
		return !ok
	})
	return it, true, nil
}

// RotateDeviceToken revokes the device's tokens and issues one with its
// paired role and scopes.
func (s *SQLite) RotateDeviceToken(ctx context.Context, deviceID string, at int64) (string, error) {
	at = s.orNow(at)
	var token string
	err := s.withTx(ctx, "rotate device token", func(tx *sql.Tx) error {
		role, scopes, err := pairedGrant(ctx, tx, "rotate device token", deviceID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM device_tokens WHERE device_id = ?`, deviceID); err != nil {
			return fmt.Errorf("store: rotate device token %s: %w", deviceID, err)
		}
		token, err = insertToken(ctx, tx, "rotate device token", deviceID, role, scopes, at)
		return err
	})
	if err != nil {
		return "", err
	}
	return token, nil
}

// RevokeDeviceTokens deletes all of the device's tokens.
func (s *SQLite) RevokeDeviceTokens(ctx context.Context, deviceID string) (int64, error) {
	var n int64
	err := s.withTx(ctx, "revoke device tokens", func(tx *sql.Tx) error {
		if _, _, err := pairedGrant(ctx, tx, "revoke device tokens", deviceID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM device_tokens WHERE device_id = ?`, deviceID)
		if err != nil {
			return fmt.Errorf("store: revoke device tokens %s: %w", deviceID, err)
		}
		n, err = res.RowsAffected()
		if err != nil {
			return fmt.Errorf("store: revoke device tokens %s: %w", deviceID, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
