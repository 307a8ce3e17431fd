package tui

import (
	"image/color"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// paint gives a finished frame the app style's colours. A theme with a
// background must cover every cell with it, but each styled span of the
// frame ends with a reset, and the spaces that pad panes and fill gaps
// are not styled at all: wrapped once in the app style, only the cells
// before the first reset of a line get the background, and the terminal's
// own shows through the rest as stripes. So paint follows the SGR state
// along each line and, wherever a sequence drops the background or the
// foreground back to the terminal's default, sets the app's again. Spans
// that choose their own colours (badges, dialogs, selected rows) keep
// them. A theme without a background keeps the terminal's: its frame only
// gets the app style, as before.
func paint(frame string, app lipgloss.Style) string {
	bg := app.GetBackground()
	if isNoColor(bg) {
		return app.Render(frame)
	}
	var fg color.Color
	if c := app.GetForeground(); !isNoColor(c) {
		fg = c
	}
	p := painter{bg: ansi.NewStyle().BackgroundColor(bg).String()}
	p.both = p.bg
	if fg != nil {
		p.fg = ansi.NewStyle().ForegroundColor(fg).String()
		p.both = ansi.NewStyle().ForegroundColor(fg).BackgroundColor(bg).String()
	}
	// One parser for the frame, with a small buffer for the data of string
	// sequences (OSC and the like), which paint never reads, instead of
	// the default 64 KB.
	parser := ansi.NewParser()
	parser.SetDataSize(16)
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		lines[i] = p.line(l, parser)
	}
	return strings.Join(lines, "\n")
}

// painter holds the SGR sequences that set the app's foreground, its
// background, and both; fg is empty when the app leaves the foreground
// alone (both is then the background's).
type painter struct {
	fg, bg, both string
}

// line paints one line: the app's colours first, again after every SGR
// sequence that resets them, and a reset at the end so that nothing leaks
// into the next line.
func (p painter) line(l string, parser *ansi.Parser) string {
	var b strings.Builder
	b.Grow(len(l) + 64)
	b.WriteString(p.both)
	for {
		// Only escape sequences matter: copy the text between them as it is.
		i := strings.IndexByte(l, ansi.ESC)
		if i < 0 {
			b.WriteString(l)
			break
		}
		b.WriteString(l[:i])
		l = l[i:]
		seq, _, n, _ := ansi.DecodeSequence(l, ansi.NormalState, parser)
		b.WriteString(seq)
		l = l[n:]
		if ansi.HasCsiPrefix(seq) && ansi.Cmd(parser.Command()) == 'm' {
			switch fgKept, bgKept := sgrKeeps(parser.Params()); {
			case !fgKept && !bgKept:
				b.WriteString(p.both)
			case !bgKept:
				b.WriteString(p.bg)
			case !fgKept:
				b.WriteString(p.fg)
			}
		}
		if n == 0 { // never loop on input the decoder cannot move past
			b.WriteString(l)
			break
		}
	}
	b.WriteString(ansi.ResetStyle)
	return b.String()
}

// sgrKeeps reports whether the foreground and the background set before
// an SGR sequence with parameters ps are still in force after it: a reset
// (also an empty sequence) or a default colour (39, 49) drops them; a
// colour of the sequence's own replaces them, which paint leaves alone.
func sgrKeeps(ps ansi.Params) (fg, bg bool) {
	fg, bg = true, true
	if len(ps) == 0 {
		return false, false
	}
	for i := 0; i < len(ps); i++ {
		switch n := ps[i].Param(0); {
		case n == 0:
			fg, bg = false, false
		case n == 39:
			fg = false
		case n == 49:
			bg = false
		case n >= 30 && n <= 37, n >= 90 && n <= 97:
			fg = true
		case n >= 40 && n <= 47, n >= 100 && n <= 107:
			bg = true
		case n == 38, n == 48, n == 58:
			// An extended colour: skip its own parameters, so an RGB
			// value of 0 or 49 is not read as a reset.
			var c color.Color
			i += max(ansi.ReadStyleColor(ps[i:], &c), 1) - 1
			switch n {
			case 38:
				fg = true
			case 48:
				bg = true
			}
		}
	}
	return fg, bg
}
