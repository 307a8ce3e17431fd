package tools

import (
	"slices"
	"testing"
)

// Configuration and flags check the names they allow against Gated, so it
// must name exactly the tools that change files or run commands.
func TestGatedNamesTheToolsThatAsk(t *testing.T) {
	want := []string{"write_file", "edit_file", "run_command"}
	if got := Gated(); !slices.Equal(got, want) {
		t.Fatalf("Gated() = %v, want %v", got, want)
	}
	for _, name := range allTools {
		if IsGated(name) != slices.Contains(want, name) {
			t.Errorf("IsGated(%q) = %v", name, IsGated(name))
		}
	}
	if IsGated("rm_rf") || IsGated("") {
		t.Fatal("an unknown tool is not gated")
	}
}
