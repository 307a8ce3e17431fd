package main

import (
	"fmt"
	"os"
	"testing"
)

// BenchmarkLauncher measures what the sandbox launcher costs per command in
// the real binary: retrace started as the launcher (without and with
// Landlock) running sh -c true, against sh -c true alone. The launcher's
// start is retrace's: every package's init runs before the launcher takes
// over (see 'GODEBUG=inittrace=1 retrace __sandbox-exec').
func BenchmarkLauncher(b *testing.B) {
	dir := b.TempDir()
	bin := dir + "/retrace"
	if out, err := testCommand(b, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("build: %v\n%s", err, out)
	}
	run := func(b *testing.B, argv ...string) {
		for b.Loop() {
			sr, sw, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			cmd := testCommand(b, argv[0], argv[1:]...)
			cmd.Dir, cmd.ExtraFiles = dir, []*os.File{sw}
			err = cmd.Run()
			sw.Close()
			sr.Close()
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("sh", func(b *testing.B) { run(b, "sh", "-c", "true") })
	for _, tc := range []struct{ name, policy string }{
		{"launcher", fmt.Sprintf(`{"parent":%d}`, os.Getpid())},
		{"launcher+landlock", fmt.Sprintf(`{"parent":%d,"confine":true,"refer":true,"write":[%q],"read":["/usr","/bin","/lib","/lib64","/etc"],"devices":["/dev/null"]}`, os.Getpid(), dir)},
	} {
		b.Run(tc.name, func(b *testing.B) { run(b, bin, "__sandbox-exec", tc.policy, "sh", "-c", "true") })
	}
}
