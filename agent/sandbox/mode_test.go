package sandbox

import (
	"errors"
	"testing"
)

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Mode
		err  bool
	}{
		{"", Workspace, false},
		{"workspace", Workspace, false},
		{"workspace-no-network", WorkspaceNoNetwork, false},
		{"off", Off, false},
		{"Workspace", 0, true},
		{"none", 0, true},
	} {
		got, err := ParseMode(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseMode(%q) = %v, %v", tc.in, got, err)
		}
		if err != nil && !errors.Is(err, ErrUnknownMode) {
			t.Errorf("ParseMode(%q): %v is not ErrUnknownMode", tc.in, err)
		}
		if err == nil && tc.in != "" && got.String() != tc.in {
			t.Errorf("%v.String() = %q, want %q", got, got.String(), tc.in)
		}
	}
	if _, err := ParseMode("x"); err.Error() != `unknown sandbox mode "x"; the modes are workspace, workspace-no-network, off` {
		t.Errorf("error %q", err)
	}
	if s := Mode(7).String(); s != "Mode(7)" {
		t.Errorf("Mode(7).String() = %q", s)
	}
}

// TestStatus enumerates what each mode gets from kernels with and without
// Landlock, and with and without its network rules.
func TestStatus(t *testing.T) {
	noLandlock := "commands run unconfined: this kernel has no Landlock (it takes Linux 5.13 or later with landlock among its enabled security modules)"
	for _, tc := range []struct {
		mode          Mode
		goos          string
		abi           int
		files, net    bool
		warning, line string
	}{
		{Workspace, "linux", 7, true, false, "",
			"commands sandboxed (Landlock ABI 7): they write only in the workspace and their temp dir; network allowed"},
		{WorkspaceNoNetwork, "linux", 7, true, true, "",
			"commands sandboxed (Landlock ABI 7): they write only in the workspace and their temp dir; no network"},
		{WorkspaceNoNetwork, "linux", 4, true, true, "", ""},
		{WorkspaceNoNetwork, "linux", 3, true, false,
			"commands have network: this kernel's Landlock (ABI 3) cannot restrict the network; ABI 4 (Linux 6.7) can",
			"commands sandboxed (Landlock ABI 3): they write only in the workspace and their temp dir; network allowed: this kernel's Landlock (ABI 3) cannot restrict the network; ABI 4 (Linux 6.7) can"},
		{Workspace, "linux", 1, true, false, "", ""},
		{Workspace, "linux", 0, false, false, noLandlock, noLandlock},
		{WorkspaceNoNetwork, "linux", 0, false, false, noLandlock, noLandlock},
		{Workspace, "darwin", 0, false, false, "commands run unconfined: the sandbox uses Landlock, which only Linux has", ""},
		{Off, "linux", 7, false, false, `commands run unconfined: the sandbox is off (sandbox = "off")`,
			`commands run unconfined: the sandbox is off (sandbox = "off")`},
	} {
		s := status(tc.mode, tc.goos, tc.abi, nil)
		if s.Files != tc.files || s.Network != tc.net || s.Warning() != tc.warning || s.Unconfined() == tc.files {
			t.Errorf("%v on %s ABI %d: files %v network %v warning %q", tc.mode, tc.goos, tc.abi, s.Files, s.Network, s.Warning())
		}
		if tc.line != "" && s.String() != tc.line {
			t.Errorf("%v on %s ABI %d: String() = %q\nwant %q", tc.mode, tc.goos, tc.abi, s.String(), tc.line)
		}
	}
	// The agents let through are said wherever the status is: in the
	// approval dialog's line and in the warning run prints, alone or
	// after the reason.
	agents := status(Workspace, "linux", 7, nil)
	agents.Agents = true
	if want := "commands can use your SSH and GPG agents (sandbox_agents = true)"; agents.Warning() != want ||
		agents.String() != "commands sandboxed (Landlock ABI 7): they write only in the workspace and their temp dir; network allowed; "+want {
		t.Errorf("agents let through: warning %q, line %q", agents.Warning(), agents.String())
	}
	agents = status(Off, "linux", 7, nil)
	agents.Agents = true
	if w := agents.Warning(); w != `commands run unconfined: the sandbox is off (sandbox = "off"); commands can use your SSH and GPG agents (sandbox_agents = true)` {
		t.Errorf("off, agents let through: warning %q", w)
	}
	s := status(Workspace, "linux", 0, errors.New("function not implemented"))
	if want := "this kernel has no Landlock (it takes Linux 5.13 or later with landlock among its enabled security modules): function not implemented"; s.Reason != want {
		t.Errorf("reason %q", s.Reason)
	}
}
