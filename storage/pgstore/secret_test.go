package pgstore_test

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"retrace/storage/pgstore"
	"retrace/storage/pgstore/pgtest"
)

var ctxTime = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

const secret = "pw-Never-Shown-7f3a"

// withPassword is loc with its password replaced by secret.
func withPassword(t *testing.T, loc string) string {
	t.Helper()
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), secret)
	return u.String()
}

// The password is never in an error or in String, whether the URL does
// not parse, the password is wrong, or the database is missing.
func TestPasswordNeverShown(t *testing.T) {
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	if pw, _ := mustURL(t, loc).User.Password(); pw != "" && strings.Contains(st.String(), pw) {
		t.Fatalf("String shows the password: %s", st)
	}
	wrong := withPassword(t, loc)
	missing := withPassword(t, pgtest.WithDatabase(loc, "retrace_no_such_database"))
	for name, conn := range map[string]string{
		"wrong password":       wrong,
		"missing database":     missing,
		"URL that won't parse": strings.Replace(wrong, "postgres://", "postgres://[", 1),
		"bad port":             strings.Replace(wrong, "?", "?port=notaport&", 1),
		"key=value settings":   "host=/nonexistent/socket/dir user=retrace password=" + secret + " dbname=x connect_timeout=2",
	} {
		st, err := pgstore.Open(ctx, conn, pgstore.Options{})
		if err == nil {
			// A server that trusts the socket takes any password: the
			// store opens, and must not show it either.
			if strings.Contains(st.String(), secret) {
				t.Errorf("%s: String shows the password: %s", name, st)
			}
			if _, err := st.Session(ctx, "0000000000000000"); err == nil || strings.Contains(err.Error(), secret) {
				t.Errorf("%s: an operation's error shows the password: %v", name, err)
			}
			st.Close()
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the password: %v", name, err)
		}
	}
	if _, err := pgstore.Open(ctx, missing, pgstore.Options{}); err == nil || !strings.Contains(err.Error(), "retrace_no_such_database") {
		t.Errorf("an error opening a missing database does not name it: %v", err)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// A server that never answers is given up on, saying where, instead of
// holding the command for as long as the network would.
func TestConnectGivesUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Accepts, then says nothing: the startup message is never answered.
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	url := "postgres://u:pw@" + ln.Addr().String() + "/db?sslmode=disable"
	_, err = pgstore.Open(ctx, url, pgstore.Options{ConnectTimeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) || strings.Contains(err.Error(), "pw@") {
		t.Fatalf("open against a silent server: %v", err)
	}
}
