package tui

import (
	"fmt"
	"testing"

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
