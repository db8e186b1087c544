package channels

import (
	"encoding/base64"
	"fmt"
	"io"

	"github.com/mdp/qrterminal/v3"
	"rsc.io/qr"
)

// RenderQR draws code as a QR code in a terminal: two modules per
// character cell (half blocks), a quiet zone of two, low error correction
// so it stays small. The output depends only on code.
func RenderQR(w io.Writer, code string) {
	qrterminal.GenerateWithConfig(code, qrterminal.Config{
		Level: qrterminal.L, Writer: w, HalfBlocks: true, QuietZone: 2,
		BlackChar: qrterminal.BLACK_BLACK, WhiteBlackChar: qrterminal.WHITE_BLACK,
		WhiteChar: qrterminal.WHITE_WHITE, BlackWhiteChar: qrterminal.BLACK_WHITE,
	})
}

// QRDataURL encodes code as a PNG QR code in a data: URL, for the web
// page (web.login.start's qrDataUrl).
func QRDataURL(code string) (string, error) {
	c, err := qr.Encode(code, qr.M)
	if err != nil {
		return "", fmt.Errorf("encode QR code: %w", err)
	}
	c.Scale = 6
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(c.PNG()), nil
}
