package themes

import (
	"errors"
	"fmt"
	"image/color"
	"os"
	"strings"

	"charm.land/lipgloss/v2"
)

// Palette is a theme's colours by role. Every role is set except
// Background, which is nil when the theme uses the terminal's own
// background. A palette without colour uses lipgloss.NoColor{} everywhere.
type Palette struct {
	// Name is the theme's name as given to Get and shown by /theme.
	Name string
	// Dark reports whether the palette is meant for a dark background.
	Dark bool

	// Text is normal text; Muted is secondary text; Subtle is for hints and
	// the borders of unfocused panes.
	Text, Muted, Subtle color.Color
	// Primary marks titles, focused borders and the selection; Accent marks
	// links and keys in help.
	Primary, Accent color.Color
	// Background is the app background (nil: the terminal's default);
	// Surface is the background of dialogs and selected rows.
	Background, Surface color.Color
	// Success, Warning, Error and Info colour outcomes and notices.
	Success, Warning, Error, Info color.Color

	// User, Assistant, Tool and Reasoning colour the conversation's roles.
	User, Assistant, Tool, Reasoning color.Color

	// Idle through Failed give each agent phase its own colour.
	Idle, Planning, Executing, Awaiting, Reflecting, Done, Failed color.Color

	// DiffAdd and DiffDel colour added and removed lines in diffs.
	DiffAdd, DiffDel color.Color
}

// ErrUnknownTheme is returned, wrapped with the name and the known names,
// by Get and Resolve for a theme that does not exist.
var ErrUnknownTheme = errors.New("unknown theme")

// DefaultName is the name of the default palette.
const DefaultName = "dark"

// NoneName is the name of the palette without colour, used when NO_COLOR
// is set.
const NoneName = "none"

// Names returns the names of the built-in palettes in display order:
// dark, light, high-contrast, catppuccin, tokyo-night, none.
func Names() []string {
	names := make([]string, len(registry))
	for i, p := range registry {
		names[i] = p.Name
	}
	return names
}

// Get returns the palette with the given name. An unknown name yields an
// error wrapping ErrUnknownTheme that lists the known names.
func Get(name string) (Palette, error) {
	for _, p := range registry {
		if p.Name == name {
			return p, nil
		}
	}
	return Palette{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownTheme, name, strings.Join(Names(), ", "))
}

// Default returns the "dark" palette, used until the terminal reports a
// light background or the user picks another theme.
func Default() Palette {
	p, err := Get(DefaultName)
	if err != nil {
		panic("themes: default palette missing") // the registry is static data
	}
	return p
}

// Resolve picks the palette to use. If NO_COLOR is set to a non-empty value
// in getenv it returns "none" whatever name was asked for; otherwise the
// named palette if name is non-empty; otherwise Default. A nil getenv means
// os.Getenv, so NO_COLOR is never silently ignored.
func Resolve(name string, getenv func(string) string) (Palette, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv("NO_COLOR") != "" {
		return Get(NoneName)
	}
	if name == "" {
		return Default(), nil
	}
	return Get(name)
}

// hasColor reports whether c is a real colour: neither nil nor NoColor.
func hasColor(c color.Color) bool {
	if c == nil {
		return false
	}
	_, none := c.(lipgloss.NoColor)
	return !none
}
