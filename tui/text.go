package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"retrace/state/transcript"
)

// Width arithmetic in this package is in terminal cells, measured with
// ansi.StringWidth on styled strings, never with len.

// inert makes model or tool text safe to put on the screen: escape
// sequences in it are shown, not obeyed.
func inert(s string) string { return transcript.Inert(s) }

// wrap word-wraps plain text to width cells (breaking long words), keeping
// the text's own line breaks. Tabs become spaces: they have no fixed width.
func wrap(text string, width int) []string {
	width = max(width, 1)
	text = strings.ReplaceAll(text, "\t", "    ")
	return strings.Split(ansi.Wrap(text, width, ""), "\n")
}

// fit makes a styled line exactly width cells: truncated with an ellipsis,
// or padded with spaces.
func fit(line string, width int) string {
	if width <= 0 {
		return ""
	}
	w := ansi.StringWidth(line)
	switch {
	case w > width:
		return ansi.Truncate(line, width, "…")
	case w < width:
		return line + strings.Repeat(" ", width-w)
	}
	return line
}

// clip shortens plain text to one line of at most width cells.
func clip(s string, width int) string {
	s = strings.Join(strings.Fields(s), " ")
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, max(width, 1), "…")
}

// cut shortens one line of text to width cells, keeping its spacing.
func cut(s string, width int) string {
	if ansi.StringWidth(s) <= width {
		return s
	}
	return ansi.Truncate(s, max(width, 1), "…")
}

// block makes lines exactly width cells wide and height lines tall.
func block(lines []string, width, height int) []string {
	out := make([]string, height)
	for i := range out {
		if i < len(lines) {
			out[i] = fit(lines[i], width)
		} else {
			out[i] = strings.Repeat(" ", max(width, 0))
		}
	}
	return out
}

// frame draws content in a rounded box width×height cells, with the title
// in the top border. The content is cut to fit.
func frame(title string, content []string, width, height int, border, titleStyle lipgloss.Style) []string {
	if width < 2 || height < 2 {
		return block(nil, width, height)
	}
	border = borderPaint(border)
	inner := width - 2
	t := ""
	if title != "" {
		t = titleStyle.Render(" "+clip(title, max(inner-2, 1))+" ") + border.Render("")
	}
	top := border.Render("╭") + fitBorder(t, inner, border) + border.Render("╮")
	out := []string{top}
	for _, l := range block(content, inner, height-2) {
		out = append(out, border.Render("│")+l+border.Render("│"))
	}
	return append(out, border.Render("╰"+strings.Repeat("─", inner)+"╯"))
}

// borderPaint is the colour of a border style, to paint border characters
// drawn here: the theme's pane styles carry whole lipgloss borders, which
// would box every character they render.
func borderPaint(s lipgloss.Style) lipgloss.Style {
	paint := lipgloss.NewStyle()
	if c := s.GetBorderTopForeground(); !isNoColor(c) {
		paint = paint.Foreground(c)
	}
	return paint
}

func isNoColor(c any) bool {
	_, none := c.(lipgloss.NoColor)
	return none
}

// fitBorder fills the top border after the title with ─.
func fitBorder(title string, width int, border lipgloss.Style) string {
	w := ansi.StringWidth(title)
	if w > width {
		return ansi.Truncate(title, width, "")
	}
	return title + border.Render(strings.Repeat("─", width-w))
}

// joinColumns puts blocks of equal height side by side.
func joinColumns(cols ...[]string) []string {
	if len(cols) == 0 {
		return nil
	}
	out := make([]string, len(cols[0]))
	for i := range out {
		var b strings.Builder
		for _, c := range cols {
			if i < len(c) {
				b.WriteString(c[i])
			}
		}
		out[i] = b.String()
	}
	return out
}

func visibleWidth(s string) int { return ansi.StringWidth(s) }
