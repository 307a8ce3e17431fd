package sandbox

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// Mode is how much a command is confined. The zero Mode is Workspace, so a
// caller that sets nothing gets the sandbox.
type Mode int

// The modes, as the configuration file names them.
const (
	// Workspace lets a command write only in the workspace and its own
	// temp dir, and read only there and where programs and builds need
	// to (see Allowed). The network stays open.
	Workspace Mode = iota
	// WorkspaceNoNetwork is Workspace, and TCP connect and bind are
	// refused too (Landlock ABI 4 and later; UDP from ABI 10).
	WorkspaceNoNetwork
	// Off runs commands unconfined: they may touch whatever the user
	// may. What they start still dies when they end and when retrace
	// dies.
	Off
)

var modeNames = [...]string{Workspace: "workspace", WorkspaceNoNetwork: "workspace-no-network", Off: "off"}

// String is the mode's name in the configuration file.
func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return fmt.Sprintf("Mode(%d)", int(m))
	}
	return modeNames[m]
}

// ParseMode reads a mode from the configuration file. The empty string is
// Workspace, the default.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return Workspace, nil
	}
	for m, name := range modeNames {
		if s == name {
			return Mode(m), nil
		}
	}
	return 0, fmt.Errorf("%w %q; the modes are %s", ErrUnknownMode, s, strings.Join(modeNames[:], ", "))
}

// Status says how commands are confined on this machine in one mode: the
// mode asks, the kernel decides what it gets.
type Status struct {
	Mode Mode
	// ABI is the kernel's Landlock ABI version, 0 when it has none.
	ABI int
	// Files: commands write only in the workspace and their temp dir,
	// and read only where Allowed says.
	Files bool
	// Network: commands can neither connect nor bind TCP sockets.
	Network bool
	// Reason says why commands are less confined than the mode asks,
	// or is empty when they are confined as asked.
	Reason string
	// Agents: commands may use the person's SSH and GPG agents and the
	// D-Bus session bus, as the configuration asks (Reach.Agents).
	// Check leaves it false; whoever knows the Reach sets it.
	Agents bool
}

// Check reports how commands run in mode m on this machine. The kernel is
// asked once per process.
func Check(m Mode) Status {
	abi, err := landlockABI()
	return status(m, runtime.GOOS, abi, err)
}

var landlockABI = sync.OnceValues(probeABI)

// The first Landlock ABI versions with what this package uses.
const (
	abiNetwork = 4 // TCP connect and bind rules (Linux 6.7)
	abiScoped  = 6 // signals and abstract Unix sockets scoped to a domain (Linux 6.12)
)

// status is Check's decision, apart from asking the kernel.
func status(m Mode, goos string, abi int, probeErr error) Status {
	s := Status{Mode: m, ABI: abi}
	switch {
	case m == Off:
		s.Reason = `the sandbox is off (sandbox = "off")`
	case goos != "linux":
		s.Reason = "the sandbox uses Landlock, which only Linux has"
	case abi < 1:
		s.Reason = "this kernel has no Landlock (it takes Linux 5.13 or later with landlock among its enabled security modules)"
		if probeErr != nil {
			s.Reason += ": " + probeErr.Error()
		}
	default:
		s.Files = true
		if m == WorkspaceNoNetwork {
			s.Network = abi >= abiNetwork
			if !s.Network {
				s.Reason = fmt.Sprintf("this kernel's Landlock (ABI %d) cannot restrict the network; ABI %d (Linux 6.7) can", abi, abiNetwork)
			}
		}
	}
	return s
}

// Unconfined reports whether commands can touch whatever the user can.
func (s Status) Unconfined() bool { return !s.Files }

// Warning is what a person should be told before approving a command,
// empty when commands are confined as the mode asks: "commands run
// unconfined: <reason>", or "commands have network: <reason>" when only
// the network part of workspace-no-network is missing, and that commands
// can use the person's agents when the configuration lets them.
func (s Status) Warning() string {
	var w []string
	switch {
	case s.Reason == "":
	case !s.Files:
		w = append(w, "commands run unconfined: "+s.Reason)
	default:
		w = append(w, "commands have network: "+s.Reason)
	}
	if s.Agents {
		w = append(w, agentsNote)
	}
	return strings.Join(w, "; ")
}

const agentsNote = "commands can use your SSH and GPG agents (sandbox_agents = true)"

// String says in one line how commands run, for a status line or a log.
func (s Status) String() string {
	if !s.Files {
		return s.Warning()
	}
	net := "network allowed"
	switch {
	case s.Network:
		net = "no network"
	case s.Mode == WorkspaceNoNetwork:
		net = "network allowed: " + s.Reason
	}
	out := fmt.Sprintf("commands sandboxed (Landlock ABI %d): they write only in the workspace and their temp dir; %s", s.ABI, net)
	if s.Agents {
		out += "; " + agentsNote
	}
	return out
}
