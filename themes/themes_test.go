package themes

import (
	"errors"
	"image/color"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Lip Gloss v2's Style.Render emits each colour as given (true colour for
// hex), whatever the terminal: downsampling happens when a frame is written.
// So the rendered strings below are deterministic and need no fixed colour
// profile.

var phases = []string{"idle", "planning", "executing", "awaiting_approval", "reflecting", "done", "error"}

func allPalettes(t *testing.T) []Palette {
	t.Helper()
	var ps []Palette
	for _, n := range Names() {
		p, err := Get(n)
		if err != nil {
			t.Fatalf("Get(%q): %v", n, err)
		}
		ps = append(ps, p)
	}
	return ps
}

func colourPalettes(t *testing.T) []Palette {
	t.Helper()
	return slices.DeleteFunc(allPalettes(t), func(p Palette) bool { return p.Name == NoneName })
}

func TestNames(t *testing.T) {
	want := []string{"dark", "light", "high-contrast", "catppuccin", "tokyo-night", "none"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	names := Names()
	names[0] = "mutated"
	if Names()[0] != "dark" {
		t.Fatal("Names returned the registry's own slice")
	}
}

func TestGetRoundTrip(t *testing.T) {
	for _, n := range Names() {
		p, err := Get(n)
		if err != nil {
			t.Fatalf("Get(%q): %v", n, err)
		}
		if p.Name != n {
			t.Errorf("Get(%q).Name = %q", n, p.Name)
		}
	}
	if Default().Name != "dark" {
		t.Errorf("Default().Name = %q, want dark", Default().Name)
	}
}

func TestGetUnknown(t *testing.T) {
	_, err := Get("solarized")
	if !errors.Is(err, ErrUnknownTheme) {
		t.Fatalf("Get(unknown) error = %v, want ErrUnknownTheme", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, `"solarized"`) {
		t.Errorf("error %q does not name the theme", msg)
	}
	for _, n := range Names() {
		if !strings.Contains(msg, n) {
			t.Errorf("error %q does not list %q", msg, n)
		}
	}
}

func TestResolve(t *testing.T) {
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	tests := []struct {
		name, ask string
		env       map[string]string
		want      string
		err       bool
	}{
		{"default", "", nil, "dark", false},
		{"named", "light", nil, "light", false},
		{"unknown", "nope", nil, "", true},
		{"NO_COLOR beats a name", "catppuccin", map[string]string{"NO_COLOR": "1"}, "none", false},
		{"NO_COLOR beats the default", "", map[string]string{"NO_COLOR": "yes"}, "none", false},
		{"NO_COLOR beats an unknown name", "nope", map[string]string{"NO_COLOR": "1"}, "none", false},
		{"empty NO_COLOR is unset", "light", map[string]string{"NO_COLOR": ""}, "light", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Resolve(tt.ask, env(tt.env))
			if tt.err {
				if !errors.Is(err, ErrUnknownTheme) {
					t.Fatalf("Resolve error = %v, want ErrUnknownTheme", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if p.Name != tt.want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.ask, p.Name, tt.want)
			}
		})
	}
}

func TestResolveNilGetenvReadsEnvironment(t *testing.T) {
	t.Setenv("NO_COLOR", "1")
	p, err := Resolve("dark", nil)
	if err != nil || p.Name != NoneName {
		t.Fatalf("Resolve with NO_COLOR in the environment = %q, %v; want none", p.Name, err)
	}
}

// TestRolesSet checks that every colour role is set; only Background may be
// nil (the terminal's own background).
func TestRolesSet(t *testing.T) {
	colorType := reflect.TypeFor[color.Color]()
	for _, p := range allPalettes(t) {
		v := reflect.ValueOf(p)
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Type != colorType || f.Name == "Background" {
				continue
			}
			if v.Field(i).IsNil() {
				t.Errorf("%s: %s is nil", p.Name, f.Name)
			}
		}
	}
}

// everyStyle renders sample with every style in s (and every phase badge).
func everyStyle(s Styles, sample string) []string {
	var out []string
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			if st, ok := v.Interface().(lipgloss.Style); ok {
				out = append(out, st.Render(sample))
				return
			}
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Func:
			if badge, ok := v.Interface().(func(string) lipgloss.Style); ok {
				for _, ph := range append(phases, "bogus") {
					out = append(out, badge(ph).Render(sample))
				}
			}
		}
	}
	walk(reflect.ValueOf(s))
	return out
}

func TestStylesBuildAndRender(t *testing.T) {
	for _, p := range allPalettes(t) {
		s := p.Styles()
		if s.Phase.Badge == nil {
			t.Fatalf("%s: Phase.Badge is nil", p.Name)
		}
		for _, r := range everyStyle(s, "sample\ntext") {
			if !strings.Contains(ansi.Strip(r), "sample") {
				t.Errorf("%s: rendered %q lost its text", p.Name, r)
			}
		}
	}
}

var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// colourSGR reports the first SGR sequence in s that sets a colour
// (foreground, background or underline; basic, bright, 256 or true
// colour, or the "default colour" codes), or "".
func colourSGR(s string) string {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, param := range strings.Split(m[1], ";") {
			param, _, _ = strings.Cut(param, ":")
			n, err := strconv.Atoi(param)
			if err != nil {
				continue
			}
			if (n >= 30 && n <= 49) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107) || n == 58 || n == 59 {
				return m[0]
			}
		}
	}
	return ""
}

// hasSGR reports whether some SGR sequence in s has attribute n.
func hasSGR(s string, n int) bool {
	for _, m := range sgr.FindAllStringSubmatch(s, -1) {
		for _, param := range strings.Split(m[1], ";") {
			if param == strconv.Itoa(n) {
				return true
			}
		}
	}
	return false
}

func TestNoneHasNoColour(t *testing.T) {
	p, _ := Get(NoneName)
	s := p.Styles()
	attrs := false
	for _, r := range everyStyle(s, "sample") {
		if c := colourSGR(r); c != "" {
			t.Errorf("none: %q contains colour code %q", r, c)
		}
		attrs = attrs || strings.Contains(r, "\x1b[")
	}
	if !attrs {
		t.Error("none: no style emitted any attribute (bold, reverse...)")
	}
	// Borders survive without colour.
	if b := s.Pane.Border.Render("x"); !strings.Contains(b, "╭") {
		t.Errorf("none: pane border missing: %q", b)
	}
	// The badge is reverse video.
	if b := s.Phase.Badge("executing").Render("x"); !hasSGR(b, 7) || ansi.Strip(b) != " x " {
		t.Errorf("none: badge %q is not padded reverse video", b)
	}
	// A selected row is still visible.
	if r := s.Sessions.Selected.Render("x"); r == "x" {
		t.Error("none: selected row is indistinguishable")
	}
}

func TestColourPalettesHaveColour(t *testing.T) {
	for _, p := range colourPalettes(t) {
		s := p.Styles()
		for name, st := range map[string]lipgloss.Style{
			"Chat.UserLabel":     s.Chat.UserLabel,
			"Pane.BorderFocused": s.Pane.BorderFocused,
			"Dialog.Box":         s.Dialog.Box,
			"Status.Error":       s.Status.Error,
		} {
			if r := st.Render("sample"); colourSGR(r) == "" {
				t.Errorf("%s: %s renders without colour: %q", p.Name, name, r)
			}
		}
	}
}

func TestPhaseBadgesDistinct(t *testing.T) {
	for _, p := range colourPalettes(t) {
		badge := p.Styles().Phase.Badge
		seen := map[string]string{}
		for _, ph := range append(phases, "bogus") {
			r := badge(ph).Render("phase")
			if prev, dup := seen[r]; dup {
				t.Errorf("%s: %s and %s badges render alike: %q", p.Name, prev, ph, r)
			}
			seen[r] = ph
			if ansi.Strip(r) != " phase " {
				t.Errorf("%s: %s badge is not padded 0 1: %q", p.Name, ph, ansi.Strip(r))
			}
			if !hasSGR(r, 1) || !hasSGR(r, 7) {
				t.Errorf("%s: %s badge is not bold reverse: %q", p.Name, ph, r)
			}
		}
		if got, want := badge("bogus").Render("x"), p.badge(p.Muted).Render("x"); got != want {
			t.Errorf("%s: unknown phase badge %q, want the Muted badge %q", p.Name, got, want)
		}
	}
}

func TestAppBackground(t *testing.T) {
	for _, p := range allPalettes(t) {
		bg := p.Styles().App.GetBackground()
		if got, want := hasColor(bg), hasColor(p.Background); got != want {
			t.Errorf("%s: App background %v, palette background %v", p.Name, bg, p.Background)
		}
	}
	for _, n := range []string{"dark", "light"} {
		p, _ := Get(n)
		if p.Background != nil {
			t.Errorf("%s: Background = %v, want nil (terminal default)", n, p.Background)
		}
	}
}

// luminance is WCAG relative luminance.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	ch := func(v uint32) float64 {
		x := float64(v) / 0xffff
		if x <= 0.03928 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	return 0.2126*ch(r) + 0.7152*ch(g) + 0.0722*ch(b)
}

func contrast(a, b color.Color) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// TestContrast keeps the palettes readable on the background they assume:
// their own, or black for dark ones and white for light ones.
func TestContrast(t *testing.T) {
	for _, p := range colourPalettes(t) {
		bg := p.Background
		if bg == nil {
			bg = color.White
			if p.Dark {
				bg = color.Black
			}
		}
		check := func(role string, c, on color.Color, min float64) {
			if got := contrast(c, on); got < min {
				t.Errorf("%s: %s contrast %.2f < %.1f", p.Name, role, got, min)
			}
		}
		check("Text", p.Text, bg, 7)
		check("Muted", p.Muted, bg, 4.5)
		check("Text on Surface", p.Text, p.Surface, 4.5)
		check("Primary on Surface", p.Primary, p.Surface, 3)
		for role, c := range map[string]color.Color{
			"Primary": p.Primary, "Accent": p.Accent, "Success": p.Success, "Warning": p.Warning,
			"Error": p.Error, "Info": p.Info, "User": p.User, "Assistant": p.Assistant, "Tool": p.Tool,
			"Planning": p.Planning, "Executing": p.Executing,
			"Awaiting": p.Awaiting, "Reflecting": p.Reflecting, "Done": p.Done, "Failed": p.Failed,
			"DiffAdd": p.DiffAdd, "DiffDel": p.DiffDel,
		} {
			check(role, c, bg, 4.5)
		}
		// Reasoning and Idle are meant to recede; they still need the 3:1
		// WCAG asks of large or bold text.
		check("Reasoning", p.Reasoning, bg, 3)
		check("Idle", p.Idle, bg, 3)
	}
}
