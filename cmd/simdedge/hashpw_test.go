package main

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// TestHashPassword: hash-password takes the password as its argument or
// as the first line of stdin (the line ending is not part of it), and
// prints a bcrypt hash of the asked cost; an empty or over-long password
// and a cost out of range are refused.
func TestHashPassword(t *testing.T) {
	hash := func(args []string, stdin string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := runHashPassword(args, strings.NewReader(stdin), &stdout, &stderr)
		return code, strings.TrimSuffix(stdout.String(), "\n"), stderr.String()
	}
	for _, tc := range []struct {
		args  []string
		stdin string
	}{
		{[]string{"s3cret pw"}, ""},
		{nil, "s3cret pw\n"},
		{nil, "s3cret pw\r\nignored second line\n"},
		{nil, "s3cret pw"},
		{[]string{"-cost", "4"}, "s3cret pw\n"},
	} {
		code, h, stderr := hash(tc.args, tc.stdin)
		if code != 0 || bcrypt.CompareHashAndPassword([]byte(h), []byte("s3cret pw")) != nil {
			t.Errorf("%q %q: %d %q %q", tc.args, tc.stdin, code, h, stderr)
			continue
		}
		want := bcrypt.DefaultCost
		if len(tc.args) > 1 {
			want = 4
		}
		if cost, _ := bcrypt.Cost([]byte(h)); cost != want {
			t.Errorf("%q: cost %d, want %d", tc.args, cost, want)
		}
	}
	for _, tc := range []struct {
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{nil, "\n", 1, "empty password"},
		{nil, "", 1, "empty password"},
		{nil, strings.Repeat("p", 73) + "\n", 1, "longer than 72 bytes"},
		{nil, strings.Repeat("p", 10000), 1, "longer than 72 bytes"},
		{[]string{"-cost", "3"}, "pw\n", 2, "-cost must be 4 to 14"},
		{[]string{"-cost", "15"}, "pw\n", 2, "-cost must be 4 to 14"},
		{[]string{"a", "b"}, "", 2, "give one password"},
	} {
		code, h, stderr := hash(tc.args, tc.stdin)
		if code != tc.code || h != "" || !strings.Contains(stderr, tc.stderr) {
			t.Errorf("%q %.20q: %d %q %q, want %d and %q", tc.args, tc.stdin, code, h, stderr, tc.code, tc.stderr)
		}
	}
}

// TestHashPasswordBasicAuth: a hash from hash-password, pasted into a
// basic_auth users entry, is accepted by check and lets the password in.
func TestHashPasswordBasicAuth(t *testing.T) {
	var out bytes.Buffer
	if code := runHashPassword([]string{"-cost", "4"}, strings.NewReader("open sesame\n"), &out, &bytes.Buffer{}); code != 0 {
		t.Fatal("hash-password failed")
	}
	file := filepath.Join(t.TempDir(), "c.yaml")
	writeFile(t, file, "routes:\n  - match: {path: /v}\n    basic_auth: {users: {alice: \""+strings.TrimSpace(out.String())+"\"}}\n"+
		"    respond: {status: 200, body: in}\n")
	var stderr bytes.Buffer
	if code := runCheck([]string{"-q", file}, &bytes.Buffer{}, &stderr); code != 0 {
		t.Fatalf("check: %d %s", code, stderr.String())
	}
	addr := startServe(t, file)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	for _, tc := range []struct {
		pass string
		code int
	}{{"open sesame", 200}, {"open sesame\n", 401}, {"wrong", 401}} {
		req, _ := http.NewRequest("GET", "http://"+addr+"/v", nil)
		req.SetBasicAuth("alice", tc.pass)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.code {
			t.Errorf("password %q: %d, want %d", tc.pass, resp.StatusCode, tc.code)
		}
	}
}
