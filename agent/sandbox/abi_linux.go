package sandbox

import ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

// probeABI asks the kernel for its Landlock ABI version.
func probeABI() (int, error) {
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0, err
	}
	return v, nil
}
