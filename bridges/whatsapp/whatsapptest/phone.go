// Package whatsapptest fakes WhatsApp behind the whatsapp bridge's Client
// seam: the bridge builds its clients through Phone.NewClient, tests
// inject real whatsmeow events (messages, connection events, QR pairing)
// and read back what the bridge sent. The device store stays real
// (whatsmeow's sqlstore on SQLite), so pairing, restarts and logouts
// persist as they would in production. Nothing dials WhatsApp.
package whatsapptest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waAdv"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"

	"github.com/switchboardhq/switchboard/bridges/bridgetest"
	"github.com/switchboardhq/switchboard/bridges/whatsapp"
)

// Phone is the fake WhatsApp every client of a test talks to. Its
// exported fields may be set before the bridge starts.
type Phone struct {
	// ConnectErr, when set, decides the error of connection attempt n
	// (1-based, counted over all clients); nil lets it succeed.
	ConnectErr func(n int) error
	// NoAutoLogin keeps a linked client from logging in (emitting
	// Connected) on its own when it connects; the test emits events.
	NoAutoLogin bool
	// QRCodes are the QR payloads a pairing client is given, in order.
	QRCodes []string
	// PairingCode is what PairPhone returns.
	PairingCode string
	// LogoutErr, when set, makes Logout fail as if WhatsApp could not be
	// reached.
	LogoutErr error

	mu       sync.Mutex
	clients  []*Client
	connects int
	media    map[string][]byte
	changes  bridgetest.Changes
}

// New returns a Phone with three QR codes and a pairing code.
func New() *Phone {
	return &Phone{
		QRCodes:     []string{"2@fake-qr-1,key,adv", "2@fake-qr-2,key,adv", "2@fake-qr-3,key,adv"},
		PairingCode: "ABCD-EFGH",
		media:       map[string][]byte{},
	}
}

// NewClient is the bridge's whatsapp.NewClientFunc.
func (p *Phone) NewClient(dev *store.Device, _ *slog.Logger) whatsapp.Client {
	c := &Client{phone: p, Device: dev, handlers: map[uint32]whatsmeow.EventHandlerWithSuccessStatus{}}
	p.mu.Lock()
	p.clients = append(p.clients, c)
	p.mu.Unlock()
	p.changed()
	return c
}

// changed wakes WaitFor.
func (p *Phone) changed() { p.changes.Changed() }

// WaitFor waits until cond holds, re-checking whenever the phone sees
// something happen, or ctx ends.
func (p *Phone) WaitFor(ctx context.Context, cond func() bool) error {
	if err := p.changes.WaitFor(ctx, cond); err != nil {
		return fmt.Errorf("whatsapptest: condition not met: %w", err)
	}
	return nil
}

// Clients returns every client built so far, oldest first.
func (p *Phone) Clients() []*Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.clients)
}

// Last returns the newest client, or nil.
func (p *Phone) Last() *Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.clients) == 0 {
		return nil
	}
	return p.clients[len(p.clients)-1]
}

// Connects counts connection attempts over all clients.
func (p *Phone) Connects() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.connects
}

// AddMedia makes Download return data for attachments with directPath.
func (p *Phone) AddMedia(directPath string, data []byte) {
	p.mu.Lock()
	p.media[directPath] = data
	p.mu.Unlock()
}

// Sent is one message a client sent.
type Sent struct {
	To      types.JID
	ID      types.MessageID
	Message *waE2E.Message
}

// Text is the sent message's text or caption.
func (s Sent) Text() string {
	m := s.Message
	switch {
	case m.GetConversation() != "":
		return m.GetConversation()
	case m.GetExtendedTextMessage() != nil:
		return m.GetExtendedTextMessage().GetText()
	}
	return ""
}

// Presence is one chat presence a client sent.
type Presence struct {
	To    types.JID
	State types.ChatPresence
}

// Read is one read receipt a client sent.
type Read struct {
	IDs          []types.MessageID
	Chat, Sender types.JID
}

// Client is one fake whatsmeow client. Safe for concurrent use.
type Client struct {
	phone *Phone
	// Device is the device the bridge built the client for (a real
	// store device).
	Device *store.Device

	mu        sync.Mutex
	handlers  map[uint32]whatsmeow.EventHandlerWithSuccessStatus
	nextID    uint32
	connected bool
	connects  int
	sent      []Sent
	presences []Presence
	reads     []Read
	uploads   [][]byte
	qr        chan whatsmeow.QRChannelItem
	pairPhone string
	loggedOut bool
}

var _ whatsapp.Client = (*Client)(nil)

// Emit dispatches evt to the client's handlers as whatsmeow does and
// reports whether all of them succeeded (false: whatsmeow would withhold
// the ack).
func (c *Client) Emit(evt any) bool {
	c.mu.Lock()
	hs := make([]whatsmeow.EventHandlerWithSuccessStatus, 0, len(c.handlers))
	ids := make([]uint32, 0, len(c.handlers))
	for id := range c.handlers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		hs = append(hs, c.handlers[id])
	}
	c.mu.Unlock()
	ok := true
	for _, h := range hs {
		if !h(evt) {
			ok = false
			break
		}
	}
	c.phone.changed()
	return ok
}

// AddEventHandlerWithSuccessStatus implements whatsapp.Client.
func (c *Client) AddEventHandlerWithSuccessStatus(h whatsmeow.EventHandlerWithSuccessStatus) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID++
	c.handlers[c.nextID] = h
	return c.nextID
}

// RemoveEventHandler implements whatsapp.Client.
func (c *Client) RemoveEventHandler(id uint32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.handlers[id]
	delete(c.handlers, id)
	return ok
}

// Handlers counts the registered handlers.
func (c *Client) Handlers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.handlers)
}

// ConnectContext implements whatsapp.Client: a linked device logs in
// (Connected) unless Phone.NoAutoLogin; an unlinked one starts pairing
// and is handed the first QR code.
func (c *Client) ConnectContext(ctx context.Context) error {
	p := c.phone
	p.mu.Lock()
	p.connects++
	n := p.connects
	connErr := p.ConnectErr
	auto := !p.NoAutoLogin
	codes := slices.Clone(p.QRCodes)
	p.mu.Unlock()
	c.mu.Lock()
	c.connects++
	c.mu.Unlock()
	defer p.changed()
	if connErr != nil {
		if err := connErr(n); err != nil {
			return err
		}
	}
	c.mu.Lock()
	c.connected = true
	qr := c.qr
	linked := c.Device.ID != nil
	c.mu.Unlock()
	switch {
	case linked && auto:
		c.Emit(&events.Connected{})
	case !linked && qr != nil && len(codes) > 0:
		qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: codes[0], Timeout: 60 * time.Second}
	}
	return nil
}

// Disconnect implements whatsapp.Client.
func (c *Client) Disconnect() {
	c.mu.Lock()
	c.connected = false
	c.mu.Unlock()
	c.phone.changed()
}

// IsConnected implements whatsapp.Client.
func (c *Client) IsConnected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connected
}

// Connects counts this client's connection attempts.
func (c *Client) Connects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.connects
}

// SendMessage implements whatsapp.Client: the message is recorded and
// gets an id.
func (c *Client) SendMessage(_ context.Context, to types.JID, msg *waE2E.Message, _ ...whatsmeow.SendRequestExtra) (whatsmeow.SendResponse, error) {
	c.mu.Lock()
	if !c.connected {
		c.mu.Unlock()
		return whatsmeow.SendResponse{}, whatsmeow.ErrNotConnected
	}
	id := types.MessageID(fmt.Sprintf("3EB0FAKE%04d", len(c.sent)+1))
	c.sent = append(c.sent, Sent{To: to, ID: id, Message: msg})
	c.mu.Unlock()
	c.phone.changed()
	return whatsmeow.SendResponse{ID: id, Timestamp: time.Now()}, nil
}

// Sent returns the messages sent so far.
func (c *Client) Sent() []Sent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.sent)
}

// SendChatPresence implements whatsapp.Client.
func (c *Client) SendChatPresence(_ context.Context, jid types.JID, state types.ChatPresence, _ types.ChatPresenceMedia) error {
	c.mu.Lock()
	c.presences = append(c.presences, Presence{To: jid, State: state})
	c.mu.Unlock()
	c.phone.changed()
	return nil
}

// Presences returns the chat presences sent so far.
func (c *Client) Presences() []Presence {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.presences)
}

// MarkRead implements whatsapp.Client.
func (c *Client) MarkRead(_ context.Context, ids []types.MessageID, _ time.Time, chat, sender types.JID, _ ...types.ReceiptType) error {
	c.mu.Lock()
	c.reads = append(c.reads, Read{IDs: slices.Clone(ids), Chat: chat, Sender: sender})
	c.mu.Unlock()
	c.phone.changed()
	return nil
}

// Reads returns the read receipts sent so far.
func (c *Client) Reads() []Read {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.reads)
}

// Download implements whatsapp.Client from Phone.AddMedia.
func (c *Client) Download(_ context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error) {
	p := c.phone
	p.mu.Lock()
	defer p.mu.Unlock()
	data, ok := p.media[msg.GetDirectPath()]
	if !ok {
		return nil, whatsmeow.ErrMediaDownloadFailedWith404
	}
	return slices.Clone(data), nil
}

// Upload implements whatsapp.Client: the plaintext is recorded.
func (c *Client) Upload(_ context.Context, plaintext []byte, _ whatsmeow.MediaType) (whatsmeow.UploadResponse, error) {
	c.mu.Lock()
	c.uploads = append(c.uploads, slices.Clone(plaintext))
	n := len(c.uploads)
	c.mu.Unlock()
	return whatsmeow.UploadResponse{
		URL: fmt.Sprintf("https://mmg.whatsapp.net/fake/%d", n), DirectPath: fmt.Sprintf("/fake/%d", n),
		MediaKey: []byte("key"), FileEncSHA256: []byte("enc"), FileSHA256: []byte("sha"), FileLength: uint64(len(plaintext)),
	}, nil
}

// Uploads returns the uploaded plaintexts.
func (c *Client) Uploads() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.uploads)
}

// GetQRChannel implements whatsapp.Client for an unlinked device.
func (c *Client) GetQRChannel(context.Context) (<-chan whatsmeow.QRChannelItem, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.Device.ID != nil {
		return nil, whatsmeow.ErrQRStoreContainsID
	}
	c.qr = make(chan whatsmeow.QRChannelItem, 8)
	return c.qr, nil
}

// PairPhone implements whatsapp.Client: it records the number.
func (c *Client) PairPhone(_ context.Context, phone string, _ bool, _ whatsmeow.PairClientType, _ string) (string, error) {
	c.mu.Lock()
	c.pairPhone = phone
	c.mu.Unlock()
	c.phone.changed()
	return c.phone.PairingCode, nil
}

// PairedPhone is the number PairPhone was asked for.
func (c *Client) PairedPhone() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pairPhone
}

// RefreshQR hands the pairing client its next QR code.
func (c *Client) RefreshQR(code string) {
	c.mu.Lock()
	qr := c.qr
	c.mu.Unlock()
	qr <- whatsmeow.QRChannelItem{Event: whatsmeow.QRChannelEventCode, Code: code, Timeout: 20 * time.Second}
	c.phone.changed()
}

// EndQR closes pairing with a final item (whatsmeow.QRChannelTimeout...).
func (c *Client) EndQR(item whatsmeow.QRChannelItem) {
	c.mu.Lock()
	qr := c.qr
	c.mu.Unlock()
	qr <- item
	close(qr)
	c.phone.changed()
}

// Pair completes pairing as the phone confirming does: the device gets
// jid and is saved to the store, the QR channel reports success, and the
// device logs in.
func (c *Client) Pair(ctx context.Context, jid types.JID) error {
	c.mu.Lock()
	qr := c.qr
	c.mu.Unlock()
	if qr == nil {
		return errors.New("whatsapptest: Pair before GetQRChannel")
	}
	if err := LinkDevice(ctx, c.Device, jid, types.EmptyJID); err != nil {
		return err
	}
	qr <- whatsmeow.QRChannelSuccess
	close(qr)
	c.Emit(&events.PairSuccess{ID: jid})
	c.Emit(&events.Connected{})
	return nil
}

// LinkDevice saves dev as linked to jid (and lid, when not empty), with
// the fields pairing would fill, so a test can start from a linked store.
func LinkDevice(ctx context.Context, dev *store.Device, jid, lid types.JID) error {
	dev.ID = &jid
	dev.LID = lid
	dev.PushName = "Switchboard test"
	dev.Account = &waAdv.ADVSignedDeviceIdentity{
		Details: []byte("details"), AccountSignatureKey: make([]byte, 32),
		AccountSignature: make([]byte, 64), DeviceSignature: make([]byte, 64),
	}
	return dev.Save(ctx)
}

// Logout implements whatsapp.Client: the device is deleted from the
// store, unless Phone.LogoutErr.
func (c *Client) Logout(ctx context.Context) error {
	if err := c.phone.LogoutErr; err != nil {
		return err
	}
	if c.Device.ID == nil {
		return whatsmeow.ErrNotLoggedIn
	}
	c.Disconnect()
	if err := c.Device.Delete(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	c.loggedOut = true
	c.mu.Unlock()
	c.phone.changed()
	return nil
}

// LoggedOut reports a Logout.
func (c *Client) LoggedOut() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loggedOut
}
