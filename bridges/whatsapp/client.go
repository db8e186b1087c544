package whatsapp

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/store"
	"go.mau.fi/whatsmeow/types"
	waLog "go.mau.fi/whatsmeow/util/log"
)

// Client is the part of *whatsmeow.Client the bridge uses: the seam tests
// replace with a fake that injects real whatsmeow events and records what
// is sent, so no test dials WhatsApp.
type Client interface {
	// AddEventHandlerWithSuccessStatus registers h; a false return from h
	// for a message withholds whatsmeow's ack (with SynchronousAck), so
	// WhatsApp delivers the message again.
	AddEventHandlerWithSuccessStatus(h whatsmeow.EventHandlerWithSuccessStatus) uint32
	// RemoveEventHandler unregisters a handler.
	RemoveEventHandler(id uint32) bool
	// ConnectContext opens the websocket and logs in (or starts QR
	// pairing when the device is not linked yet).
	ConnectContext(ctx context.Context) error
	// Disconnect closes the websocket; it emits no event.
	Disconnect()
	// IsConnected reports an open websocket.
	IsConnected() bool
	// SendMessage sends one message.
	SendMessage(ctx context.Context, to types.JID, msg *waE2E.Message, extra ...whatsmeow.SendRequestExtra) (whatsmeow.SendResponse, error)
	// SendChatPresence shows or clears "typing…" in a chat.
	SendChatPresence(ctx context.Context, jid types.JID, state types.ChatPresence, media types.ChatPresenceMedia) error
	// MarkRead sends read receipts.
	MarkRead(ctx context.Context, ids []types.MessageID, ts time.Time, chat, sender types.JID, extra ...types.ReceiptType) error
	// Download fetches and decrypts an attachment.
	Download(ctx context.Context, msg whatsmeow.DownloadableMessage) ([]byte, error)
	// Upload encrypts and uploads an attachment.
	Upload(ctx context.Context, plaintext []byte, kind whatsmeow.MediaType) (whatsmeow.UploadResponse, error)
	// GetQRChannel starts QR pairing; call it before ConnectContext.
	GetQRChannel(ctx context.Context) (<-chan whatsmeow.QRChannelItem, error)
	// PairPhone asks for a phone-number pairing code; call it after the
	// first QR item.
	PairPhone(ctx context.Context, phone string, showPush bool, kind whatsmeow.PairClientType, displayName string) (string, error)
	// Logout unlinks the device on WhatsApp's side and deletes it from
	// the store.
	Logout(ctx context.Context) error
}

var _ Client = (*whatsmeow.Client)(nil)

// NewClientFunc builds a Client for a device of the store.
type NewClientFunc func(dev *store.Device, log *slog.Logger) Client

// NewWhatsmeowClient is the production NewClientFunc: a *whatsmeow.Client
// that acks a message only after the bridge journaled it
// (SynchronousAck) and leaves reconnecting to the bridge, which backs off
// with a cap and knows which failures are terminal.
func NewWhatsmeowClient(dev *store.Device, log *slog.Logger) Client {
	c := whatsmeow.NewClient(dev, slogLogger{log: log})
	c.SynchronousAck = true
	c.EnableAutoReconnect = false
	return c
}

// slogLogger adapts slog to whatsmeow's logger. whatsmeow's info and
// debug lines are protocol chatter; they go to debug.
type slogLogger struct {
	log    *slog.Logger
	module string
}

var _ waLog.Logger = slogLogger{}

func (l slogLogger) emit(level slog.Level, msg string, args []any) {
	if l.log == nil || !l.log.Enabled(context.Background(), level) {
		return
	}
	l.log.Log(context.Background(), level, fmt.Sprintf(msg, args...), "module", l.module)
}

func (l slogLogger) Warnf(msg string, args ...any)  { l.emit(slog.LevelWarn, msg, args) }
func (l slogLogger) Errorf(msg string, args ...any) { l.emit(slog.LevelError, msg, args) }
func (l slogLogger) Infof(msg string, args ...any)  { l.emit(slog.LevelDebug, msg, args) }
func (l slogLogger) Debugf(msg string, args ...any) { l.emit(slog.LevelDebug-4, msg, args) }
func (l slogLogger) Sub(module string) waLog.Logger {
	if l.module != "" {
		module = l.module + "/" + module
	}
	return slogLogger{log: l.log, module: module}
}
