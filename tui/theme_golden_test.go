package tui

import (
	"fmt"
	"image/color"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"retrace/themes"
)

// themeSizes are the two sizes every screen must hold at.
var themeSizes = [][2]int{{80, 24}, {120, 40}}

// Every theme's full screen, colours kept: a session with a conversation,
// a plan, tool calls and notes.
func TestThemeGoldens(t *testing.T) {
	for _, name := range themes.Names() {
		for _, size := range themeSizes {
			t.Run(fmt.Sprintf("%s_%dx%d", name, size[0], size[1]), func(t *testing.T) {
				m := newModel(t, newFake(richSession()...), name, size[0], size[1])
				out := m.View().Content
				checkScreen(t, out, size[0], size[1])
				golden.RequireEqual(t, []byte(out))
			})
		}
	}
}

// A theme with a background paints every cell of every screen with it (or
// with a colour of its own, as badges and dialogs do): a cell on the
// terminal's default background shows as a stripe wherever the terminal's
// background differs. Text on it has a colour of the theme's too, not the
// terminal's default, which may not be readable on the theme's background.
// A theme without a background leaves the terminal's own under the panes.
func TestThemeBackgroundCoversTheScreen(t *testing.T) {
	for _, name := range themes.Names() {
		p, err := themes.Get(name)
		if err != nil {
			t.Fatal(err)
		}
		painted := isColor(p.Background)
		for _, size := range themeSizes {
			for _, sc := range themeScreens() {
				t.Run(fmt.Sprintf("%s_%dx%d_%s", name, size[0], size[1], sc.name), func(t *testing.T) {
					m := newModel(t, newFake(richSession()...), name, size[0], size[1])
					sc.open(m)
					if !sc.reached(m) {
						t.Fatalf("the %s screen did not open", sc.name)
					}
					out := m.View().Content
					checkScreen(t, out, size[0], size[1])
					if painted {
						checkPainted(t, out)
					} else {
						checkUnpainted(t, out)
					}
				})
			}
		}
	}
}

// themeScreen is one kind of screen: how to open it, and how to tell
// it opened (a test of colours on the wrong screen would pass for nothing).
type themeScreen struct {
	name    string
	open    func(*Model)
	reached func(*Model) bool
}

// themeScreens reach every kind of screen: panes, borders, gaps, the
// status line and input, dialogs, the timeline banner and tree, help.
func themeScreens() []themeScreen {
	update := func(m *Model, msg tea.Msg) {
		_, cmd := m.Update(msg)
		run(m, cmd)
	}
	keys := func(ks ...string) func(*Model) {
		return func(m *Model) {
			for _, k := range ks {
				update(m, keyMsg(k))
			}
		}
	}
	// Tab focuses the tool log when it is beside the conversation; on a
	// narrow screen it steps through the tabs to the tool log's.
	toTools := func(m *Model) {
		for range tabs {
			if m.focus == focusTools {
				return
			}
			update(m, keyMsg("tab"))
		}
	}
	inMode := func(md mode) func(*Model) bool { return func(m *Model) bool { return m.mode == md } }
	return []themeScreen{
		{"chat", keys(), inMode(modeChat)},
		{"tools_focused", toTools, func(m *Model) bool { return m.focus == focusTools }},
		{"tool_detail", func(m *Model) { toTools(m); update(m, keyMsg("enter")) }, inMode(modeToolDetail)},
		{"help", keys("?"), inMode(modeHelp)},
		{"sessions", keys("ctrl+s"), inMode(modeSessions)},
		{"timeline", keys("ctrl+t", "left"), func(m *Model) bool { return m.timeline != nil && m.mode == modeTimeline }},
		{"tree", keys("ctrl+t", "b"), inMode(modeTree)},
		{"completion", keys("/", "t"), func(m *Model) bool { return strings.Contains(m.notice, "/t") }},
		{"approval", func(m *Model) {
			update(m, ApprovalMsg{Tool: "write_file", Summary: "write 2 lines to greet.go (new file)", Path: "greet.go",
				Diff: "--- /dev/null\n+++ b/greet.go\n@@ -0,0 +1,2 @@\n+package main\n+func greet() string { return \"hi\" }\n"})
		}, func(m *Model) bool { return m.approval != nil }},
		{"quit_question", func(m *Model) {
			m.running = true
			update(m, keyMsg("ctrl+c"))
		}, func(m *Model) bool { return m.confirm != nil }},
		{"error", func(m *Model) { m.errText = "the server said no" }, func(m *Model) bool { return m.errText != "" }},
	}
}

// checkPainted fails on any cell shown on the terminal's default
// background, and on any visible character in its default foreground.
func checkPainted(t *testing.T, frame string) {
	t.Helper()
	for y, line := range lines(frame) {
		for x, c := range sgrCells(line) {
			fg, bg := c.shown()
			switch {
			case bg == nil:
				t.Fatalf("row %d col %d (%q) is on the terminal's default background:\n%s", y+1, x+1, c.text, markCell(frame, y, x))
			case fg == nil && strings.TrimSpace(c.text) != "":
				t.Fatalf("row %d col %d (%q) is in the terminal's default foreground:\n%s", y+1, x+1, c.text, markCell(frame, y, x))
			}
		}
	}
}

// checkUnpainted fails if a border is drawn on a background: a theme
// without one leaves the terminal's under the panes.
func checkUnpainted(t *testing.T, frame string) {
	t.Helper()
	for y, line := range lines(frame) {
		for x, c := range sgrCells(line) {
			if strings.ContainsAny(c.text, "│─╭╮╰╯") && (c.bg != nil || c.reverse) {
				t.Fatalf("row %d col %d: a pane border is painted in a theme without a background:\n%s", y+1, x+1, markCell(frame, y, x))
			}
		}
	}
}

// markCell is the frame's text with the cell at row y, column x marked,
// to point at a failure.
func markCell(frame string, y, x int) string {
	ls := lines(plain(frame))
	if y < len(ls) {
		ls[y] = ansi.Cut(ls[y], 0, x) + "⟦" + ansi.Cut(ls[y], x, x+1) + "⟧" + ansi.Cut(ls[y], x+1, ansi.StringWidth(ls[y]))
	}
	return strings.Join(ls, "\n")
}

// sgrCell is what a terminal knows about one cell: its text and the SGR
// colours and reverse video in force when it was drawn. A nil colour is
// the terminal's default.
type sgrCell struct {
	text    string
	fg, bg  color.Color
	reverse bool
}

// shown is the colours the cell is seen in, reverse video applied.
func (c sgrCell) shown() (fg, bg color.Color) {
	if c.reverse {
		return c.bg, c.fg
	}
	return c.fg, c.bg
}

// sgrCells follows the SGR state through one line of a frame, as a
// terminal would, and returns a cell for every column the line covers. It
// starts each line from the default state: a line must not lean on what
// the one before it left set.
func sgrCells(line string) []sgrCell {
	var (
		cells []sgrCell
		cur   sgrCell
		state byte
	)
	p := ansi.NewParser()
	for len(line) > 0 {
		seq, width, n, next := ansi.DecodeSequence(line, state, p)
		state, line = next, line[n:]
		switch {
		case width > 0:
			c := cur
			c.text = seq
			cells = append(cells, c)
			for range width - 1 {
				cells = append(cells, sgrCell{fg: cur.fg, bg: cur.bg, reverse: cur.reverse})
			}
		case ansi.HasCsiPrefix(seq) && ansi.Cmd(p.Command()).Final() == 'm':
			applySGR(&cur, p.Params())
		}
	}
	return cells
}

// applySGR changes c as the SGR parameters ps say.
func applySGR(c *sgrCell, ps ansi.Params) {
	if len(ps) == 0 {
		*c = sgrCell{}
		return
	}
	for i := 0; i < len(ps); i++ {
		switch n := ps[i].Param(0); {
		case n == 0:
			*c = sgrCell{}
		case n == 7:
			c.reverse = true
		case n == 27:
			c.reverse = false
		case n == 39:
			c.fg = nil
		case n == 49:
			c.bg = nil
		case n >= 30 && n <= 37, n >= 90 && n <= 97:
			c.fg = ansi.IndexedColor(basicIndex(n, 30, 90))
		case n >= 40 && n <= 47, n >= 100 && n <= 107:
			c.bg = ansi.IndexedColor(basicIndex(n, 40, 100))
		case n == 38, n == 48, n == 58:
			var col color.Color
			used := ansi.ReadStyleColor(ps[i:], &col)
			if n == 38 {
				c.fg = col
			} else if n == 48 {
				c.bg = col
			}
			i += max(used, 1) - 1
		}
	}
}

// basicIndex is the palette index of a basic or bright colour parameter.
func basicIndex(n, base, bright int) int {
	if n >= bright {
		return n - bright + 8
	}
	return n - base
}

// isColor reports whether c is a colour and not the terminal's default.
func isColor(c color.Color) bool {
	if c == nil {
		return false
	}
	_, none := c.(lipgloss.NoColor)
	return !none
}

// paint sets the app's colours again only where a sequence dropped them:
// a span's own colours stay, even when one of their RGB values reads like
// a reset (catppuccin's Surface is 49,50,68) or a default colour (0).
func TestPaintKeepsASpansOwnColours(t *testing.T) {
	p, err := themes.Get("catppuccin")
	if err != nil {
		t.Fatal(err)
	}
	st := p.Styles()
	line := st.Tools.Selected.Render("sel") + "gap" +
		lipgloss.NewStyle().Foreground(lipgloss.Color("#000000")).Render("blk") +
		"\x1b[1;39mfg" + "\x1b[49mbg" + "\x1b[;mnone"
	cells := sgrCells(paint(line, st.App))
	want := []struct {
		text   string
		fg, bg color.Color
	}{
		{"sel", p.Primary, p.Surface},
		{"gap", p.Text, p.Background},
		{"blk", lipgloss.Color("#000000"), p.Background},
		{"fg", p.Text, p.Background},
		{"bg", p.Text, p.Background},
		{"none", p.Text, p.Background},
	}
	i := 0
	for _, w := range want {
		for _, r := range w.text {
			c := cells[i]
			if c.text != string(r) || !sameColor(c.fg, w.fg) || !sameColor(c.bg, w.bg) {
				t.Errorf("cell %d %q: fg %v bg %v, want %q fg %v bg %v", i, c.text, c.fg, c.bg, string(r), w.fg, w.bg)
			}
			i++
		}
	}
}

func sameColor(a, b color.Color) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	r1, g1, b1, a1 := a.RGBA()
	r2, g2, b2, a2 := b.RGBA()
	return r1 == r2 && g1 == g2 && b1 == b2 && a1 == a2
}

// The approval pane's text sits on the pane's background edge to edge: a
// background behind the text alone (the dialog's Surface, once) shows as
// blocks as long as each line, with the pane's own around them. Only the
// buttons, which are chips, have a colour of their own.
func TestApprovalRowsHaveOneBackground(t *testing.T) {
	for _, name := range themes.Names() {
		for _, size := range themeSizes {
			t.Run(fmt.Sprintf("%s_%dx%d", name, size[0], size[1]), func(t *testing.T) {
				m := newModel(t, newFake(richSession()...), name, size[0], size[1])
				m.Update(ApprovalMsg{Tool: "run_command", Command: "go test ./...", Summary: "run go test", Path: "greet.go",
					Diff: "--- a/greet.go\n+++ b/greet.go\n@@ -1,2 +1,2 @@\n package main\n-func greet() {}\n+func greet() string { return \"hi\" }\n"})
				frame := m.View().Content
				ls := lines(frame)
				top := -1
				for y, l := range ls {
					if strings.Contains(plain(l), "Approval") {
						top = y
						break
					}
				}
				if top < 0 {
					t.Fatalf("no approval pane:\n%s", plain(frame))
				}
				for y := top + 1; y < len(ls); y++ {
					cells := sgrCells(ls[y])
					if cells[0].text != "│" {
						break // the pane's bottom border
					}
					if strings.Contains(plain(ls[y]), "approve ") {
						continue // the buttons
					}
					_, want := cells[1].shown()
					for x := 1; x < len(cells) && cells[x].text != "│"; x++ {
						if _, bg := cells[x].shown(); !sameColor(bg, want) {
							t.Fatalf("row %d col %d: background %v, the row starts on %v:\n%s", y+1, x+1, bg, want, markCell(frame, y, x))
						}
					}
				}
			})
		}
	}
}
