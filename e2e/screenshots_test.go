package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/switchboardhq/switchboard/core/llm/llmtest"
)

// TestScreenshots renders one conversation (a /new note, a tool call, a
// markdown answer) at desktop and phone width, light and dark, and checks
// that each fits its width. With E2E_SCREENSHOTS set to a directory (as
// scripts/screenshots sets it to docs/screenshots) the pictures go there,
// for the README; otherwise to the artifacts.
func TestScreenshots(t *testing.T) {
	_, model, tb := connected(t, llmtest.Text("Hello! I am ready. What shall we look at?"))
	tb.send("/new")
	tb.waitAssistant("What shall we look at?")
	tb.waitIdle()
	tb.waitFor("the /new note", `!!document.querySelector('#messages .system-note[data-source="reset"]')`)
	model.Push(toolScript()...)
	tb.send("Which sessions do I have?")
	tb.waitAssistant("the main one.")
	tb.waitIdle()
	model.Push(llmtest.Text("Here is a summary:\n\n- **main**: this chat, started a minute ago\n- no channel sessions yet\n\nConnect a bot with `switchboard config example` as a guide."))
	tb.send("Summarise that as a list, please.")
	tb.waitAssistant("Connect a bot")
	tb.waitIdle()
	tb.waitFor("the chat named by its first words", `document.getElementById("session-title").textContent === "Which sessions do I have?"`)

	dir := os.Getenv("E2E_SCREENSHOTS")
	if dir == "" {
		dir = artifactsDir(t)
	}
	for _, v := range []struct {
		name          string
		width, height int64
		dark          bool
	}{
		{"chat-1280-light", 1280, 800, false},
		{"chat-1280-dark", 1280, 800, true},
		{"chat-390-light", 390, 844, false},
		{"chat-390-dark", 390, 844, true},
	} {
		scheme := "light"
		if v.dark {
			scheme = "dark"
		}
		tb.do("emulate "+v.name, chromedp.EmulateViewport(v.width, v.height))
		ctx, cancel := context.WithTimeout(tb.ctx, waitTimeout)
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		cancel()
		if err != nil {
			t.Fatalf("%s: emulate %s: %v", v.name, scheme, err)
		}
		tb.waitFor(v.name+" to apply", `matchMedia("(prefers-color-scheme: `+scheme+`)").matches && window.innerWidth === `+strconv.FormatInt(v.width, 10))
		if wide := eval[bool](tb, `document.documentElement.scrollWidth > window.innerWidth`); wide {
			t.Errorf("%s: the page scrolls sideways", v.name)
		}
		if dir == "" {
			continue
		}
		ctx, cancel = context.WithTimeout(tb.ctx, 20*time.Second)
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, v.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScreenshotsAreInTheREADME: every picture TestScreenshots makes is in
// docs/screenshots and shown in the README, so `make screenshots` is the
// whole of keeping them current.
func TestScreenshotsAreInTheREADME(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"chat-1280-light", "chat-1280-dark", "chat-390-light", "chat-390-dark"} {
		path := "docs/screenshots/" + name + ".png"
		if fi, err := os.Stat(filepath.Join("..", path)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v (run make screenshots)", path, err)
		}
		if !strings.Contains(string(readme), "]("+path+")") {
			t.Errorf("the README does not show %s", path)
		}
	}
}
