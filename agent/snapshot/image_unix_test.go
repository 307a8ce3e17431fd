//go:build unix

package snapshot

import (
	"syscall"
	"testing"

	"retrace/state"
)

func TestImageOfWhatIsNotAFile(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a.txt", "a")
	f.write("dir/b.txt", "b")
	if err := syscall.Mkfifo(f.path("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want state.FileImage
	}{
		{"missing", state.FileImage{Absent: true}},
		{"no/such/dir/file", state.FileImage{Absent: true}},
		{"a.txt/under/a/file", state.FileImage{Absent: true}},
		{"dir", state.FileImage{Absent: true}},
		{"fifo", state.FileImage{Untracked: reasonNotRegular}},
	} {
		img, data, err := f.w.Image(c.path)
		if err != nil || withoutStamp(img) != c.want || data != nil {
			t.Errorf("Image(%s) = %+v, %q, %v; want %+v", c.path, img, data, err, c.want)
		}
	}
	if got := f.takeReads(); len(got) != 0 {
		t.Errorf("read %v", got)
	}
}
